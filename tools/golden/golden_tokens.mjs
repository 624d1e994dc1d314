// Golden token ids from Hugging Face's own library (the npm package `tokenizers`, pinned in package.json), for
// the engine's tokenizer.json support (issue "Today's models"). Tools only: nothing here runs in AttnScope.
//
//   cd tools/golden && npm ci && node golden_tokens.mjs OUT.json TOKENIZER [TOKENIZER ...]
//
// TOKENIZER is a folder holding tokenizer.json, or a .json file itself. For each tokenizer and each text of
// TEXTS below, with and without the special tokens the post-processor adds: the ids, the token strings, the
// byte offsets into the UTF-8 text (the library gives character offsets; they are converted here), the type
// ids, and the decoded text with special tokens skipped ("decoded") and kept ("decoded_all"). PAIRS are
// encoded as pairs with special tokens (templates with $B). Texts are
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
  'Say <mask> then [MASK] , XX marks xx in axx; [BRK] alone but a[BRK]b, <|im_end|>\n<s>',
  '\t\tTabs\tand\u3000ideographic\u2003em  spaces\n\n\n',
];

const PAIRS = [
  ['Hello world!', 'How are you?'],
  ['', 'second only'],
];

// Character (code point) offsets -> byte offsets of the UTF-8 text.
function byteOffsets(text, offsets) {
  const bytes = [0];
  for (const ch of text) bytes.push(bytes[bytes.length - 1] + Buffer.byteLength(ch, 'utf8'));
  return offsets.map(([a, b]) => [bytes[a], bytes[b]]);
}

function describe(e, text, pair) {
  const out = { ids: Array.from(e.getIds()), tokens: e.getTokens(), type_ids: Array.from(e.getTypeIds()) };
  const seq = Array.from(e.getSequenceIds ? e.getSequenceIds() : []);
  const offsets = e.getOffsets();
  // Offsets are into the text their token came from (the pair's second text for sequence 1).
  out.offsets = offsets.map((o, k) => byteOffsets(seq[k] === 1 ? pair : text, [o])[0]);
  out.special = Array.from(e.getSpecialTokensMask());
  return out;
}

async function golden(path) {
  const file = path.endsWith('.json') ? path : `${path}/tokenizer.json`;
  const tokenizer = Tokenizer.fromFile(file);
  const cases = [];
  for (const text of TEXTS) {
    const entry = { text };
    for (const special of [false, true]) {
      const e = await tokenizer.encode(text, null, { addSpecialTokens: special });
      entry[special ? 'with_special' : 'plain'] = describe(e, text, '');
      if (!special) {
        const ids = Array.from(e.getIds());
        entry.decoded = await tokenizer.decode(ids, true);
        entry.decoded_all = await tokenizer.decode(ids, false);
      }
    }
    cases.push(entry);
  }
  const pairs = [];
  for (const [a, b] of PAIRS) {
    const e = await tokenizer.encode(a, b, { addSpecialTokens: true });
    pairs.push({ text: a, pair: b, with_special: describe(e, a, b) });
  }
  return { tokenizer: path.endsWith('.json') ? basename(path) : basename(path), cases, pairs };
}

const [out, ...dirs] = process.argv.slice(2);
if (!out || dirs.length === 0) {
  console.error('usage: node golden_tokens.mjs OUT.json TOKENIZER [TOKENIZER ...]');
  process.exit(2);
}
const result = { library: `tokenizers ${require('tokenizers/package.json').version}`, tokenizers: [] };
for (const dir of dirs) result.tokenizers.push(await golden(dir));
writeFileSync(out, JSON.stringify(result, null, 0) + '\n');
console.log(`wrote ${out}: ${dirs.length} tokenizer(s) x ${TEXTS.length} texts (${result.library})`);
