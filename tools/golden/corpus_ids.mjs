// Token ids of a corpus file (one input per line) from Hugging Face's own library (the npm package `tokenizers`,
// pinned in package.json), for tests/bench/torch_corpus_peer.py: the torch peer of a corpus run takes the ids the
// engine's tokenizer gives (tests/unit's golden tests hold the two equal). Tools only.
//
//   cd tools/golden && node corpus_ids.mjs TOKENIZER CORPUS.txt OUT.jsonl [MAX_TOKENS]
//
// TOKENIZER is a folder holding tokenizer.json. Each line of CORPUS.txt gives one line of OUT.jsonl: {"id": line
// number from 0, "ids": [...]}, the special tokens the tokenizer's post-processor adds included, cut to MAX_TOKENS
// (default: all); empty lines are skipped, as the engine skips them.
import { createRequire } from 'module';
import { readFileSync, writeFileSync } from 'fs';
import { join } from 'path';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const [tokenizerDir, corpus, out, maxArg] = process.argv.slice(2);
if (!out) {
  console.error('usage: node corpus_ids.mjs TOKENIZER CORPUS.txt OUT.jsonl [MAX_TOKENS]');
  process.exit(2);
}
const max = maxArg ? Number(maxArg) : Infinity;
const tokenizer = Tokenizer.fromFile(join(tokenizerDir, 'tokenizer.json'));
const lines = readFileSync(corpus, 'utf8').split('\n');
if (lines.length && lines[lines.length - 1] === '') lines.pop();
const rows = [];
for (let i = 0; i < lines.length; ++i) {
  if (lines[i].trim() === '') continue;
  const encoding = await tokenizer.encode(lines[i], null, { addSpecialTokens: true });
  rows.push(JSON.stringify({ id: i, ids: encoding.getIds().slice(0, max) }));
}
writeFileSync(out, rows.join('\n') + '\n');
console.log(`${out}: ${rows.length} inputs`);
