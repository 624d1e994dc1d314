// Golden token ids from Hugging Face's own library (the npm package `tokenizers`, pinned in package.json), for
// the engine's tokenizer.json support (issue "Today's models"). Tools only: nothing here runs in AttnScope.
//
//   cd tools/golden && npm ci && node golden_tokens.mjs OUT.json TOKENIZER_DIR [TOKENIZER_DIR ...]
//
// For each folder's tokenizer.json and each text of TEXTS below, with and without the special tokens the
// post-processor adds: the ids, the token strings, and the decoded text (special tokens skipped). Texts are
// chosen for the parts a hand-written tokenizer gets wrong: Unicode categories in the Split regexes
// (\p{L}, \p{N}{1,3}), case-insensitive contractions, runs of spaces and newlines, NFC vs NFD input, byte
// fallback for characters outside the vocabulary, added tokens written literally in the text, leading
// spaces (Metaspace's prepend scheme), and the empty string.
import { createRequire } from 'module';
import { writeFileSync } from 'fs';
import { basename } from 'path';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const TEXTS = [
  '',
  'Hello world!',
  ' leading space and  two  spaces, trailing ',
  'Numbers: 1 12 123 1234 12345 3.14159 -42 1,000,000',
  "I'm sure you'LL see: DON'T, can't, it's, we've, they'd",
  'Line one\nLine two\n\n\tTabbed\r\nWindows line',
  'naïve café (NFC) vs nai\u0308ve cafe\u0301 (NFD)',
  'Ünïcödé ÀÉÎÕÜ ß ẞ ǅ ﬁ ① ² ½',
  '日本語のテキストと中文混合, 한국어 문장',
  'Emoji: 🙂 👍🏽 👨‍👩‍👧 🇫🇷 and ⌘⌥⇧',
  'العربية מימין לשמאל',
  'Combining: e\u0301 a\u0300\u0301 \u0915\u094d\u0937',
  'Control \u0007 bell, zero\u200bwidth, NBSP\u00a0here',
  '<s> literal </s> <|im_start|>user\nhi<|im_end|> <|endoftext|> [PAD]',
  'def f(x):\n    return x ** 2  # comment',
  'https://example.com/path?query=1&b=2 user@example.org',
  'supercalifragilisticexpialidocious'.repeat(3),
  '    ',
];

async function golden(dir) {
  const tokenizer = Tokenizer.fromFile(`${dir}/tokenizer.json`);
  const cases = [];
  for (const text of TEXTS) {
    const entry = { text };
    for (const special of [false, true]) {
      const e = await tokenizer.encode(text, null, { addSpecialTokens: special });
      const ids = Array.from(e.getIds());
      entry[special ? 'with_special' : 'plain'] = { ids, tokens: e.getTokens() };
      if (!special) entry.decoded = await tokenizer.decode(ids, true);
    }
    cases.push(entry);
  }
  return { tokenizer: basename(dir), cases };
}

const [out, ...dirs] = process.argv.slice(2);
if (!out || dirs.length === 0) {
  console.error('usage: node golden_tokens.mjs OUT.json TOKENIZER_DIR [TOKENIZER_DIR ...]');
  process.exit(2);
}
const result = { library: `tokenizers ${require('tokenizers/package.json').version}`, tokenizers: [] };
for (const dir of dirs) result.tokenizers.push(await golden(dir));
writeFileSync(out, JSON.stringify(result, null, 0) + '\n');
console.log(`wrote ${out}: ${dirs.length} tokenizer(s) x ${TEXTS.length} texts (${result.library})`);
