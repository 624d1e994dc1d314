// llama.cpp's own outputs for GGUF files (issue 45), through node-llama-cpp (pinned in package.json), which ships
// llama.cpp's prebuilt CPU binary. Tools only: nothing here runs in AttnScope.
//
//   cd tools/golden && npm install --ignore-scripts && node llama_goldens.mjs [--kv-cache F16|F32] FILE.gguf ...
//
// For each file, writes FILE's stem + ".golden.json" beside it: for each prompt of PROMPTS, the prompt's token ids
// as llama.cpp tokenizes them (the file's BOS first when its tokenizer.ggml.add_bos_token asks for it), the top-5
// next-token log-probabilities after the prompt (a log-softmax in float64 over llama.cpp's raw float32 logits of
// the whole vocabulary) and the greedy continuation of N_GENERATE tokens (argmax of the logits each step; EOS
// does not stop it, so every file has the same number of ids). CPU only, one thread, one sequence, the whole
// prompt in one batch: llama.cpp's sums then run in one fixed order, so a rerun gives the same numbers. Another
// CPU may load another of ggml's CPU backend variants (the file records which features it had), whose kernels
// can round differently in the last bits.
//
// The key/value cache is llama.cpp's default, F16: keys and values are rounded to half precision before
// attention, which is most of the difference between llama.cpp on an F32 file and exact arithmetic (see
// tools/gguf/README.md). --kv-cache F32 keeps them in float and writes FILE's stem + ".kv-f32.golden.json".
import { readFileSync, writeFileSync } from 'fs';
import { basename, dirname, join } from 'path';
import { fileURLToPath } from 'url';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

// The package's exports hide these two files, so they are read from node_modules.
const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), 'node_modules', 'node-llama-cpp');
const VERSION = JSON.parse(readFileSync(join(PACKAGE, 'package.json'))).version;
const RELEASE = JSON.parse(readFileSync(join(PACKAGE, 'llama', 'binariesGithubRelease.json'))).release;

const PROMPTS = [
  'Once upon a time',
  'The little girl saw a big red ball. She',
  'Tom and his dog went to the park, and',
  'One day, 12 birds sang: "Hello!"',
];
const N_GENERATE = 32;
const TOP = 5;
const CONTEXT = 128;
const THREADS = 1;

function logSoftmaxTop(logits, top) {
  // logits: Map token -> float32 logit over the full vocabulary.
  let max = -Infinity;
  for (const v of logits.values()) max = Math.max(max, v);
  let sum = 0;
  for (const v of logits.values()) sum += Math.exp(v - max);
  const logZ = max + Math.log(sum);
  return [...logits.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, top)
    .map(([id, logit]) => ({ id, logprob: logit - logZ, logit }));
}

// How far the chosen token's logit is above the runner-up's: a continuation is only as certain as its smallest
// margin, which a test can compare with its own numerical error.
function margin(logits) {
  let first = -Infinity;
  let second = -Infinity;
  for (const v of logits.values()) {
    if (v > first) {
      second = first;
      first = v;
    } else if (v > second) {
      second = v;
    }
  }
  return first - second;
}

async function goldens(llama, path, kvCache) {
  const model = await llama.loadModel({ modelPath: path, gpuLayers: 0, useMmap: true });
  const out = {
    file: basename(path),
    producer: { 'node-llama-cpp': VERSION, 'llama.cpp release': RELEASE, gpu: false, threads: THREADS,
                context: CONTEXT, sampling: 'greedy (temperature 0, no penalties)', n_generate: N_GENERATE,
                // ggml loads the CPU backend variant that suits the machine; its kernels set the last bits.
                kv_cache: kvCache, cpu: llama.systemInfo.trim() },
    bos: model.tokens.bos,
    eos: model.tokens.eos,
    add_bos: model.tokens.shouldPrependBosToken,
    cases: [],
  };
  for (const prompt of PROMPTS) {
    const context = await model.createContext({ contextSize: CONTEXT, batchSize: CONTEXT, threads: THREADS,
                                                sequences: 1, flashAttention: false,
                                                experimentalKvCacheKeyType: kvCache,
                                                experimentalKvCacheValueType: kvCache });
    const sequence = context.getSequence();
    const tokens = [...(out.add_bos ? [model.tokens.bos] : []), ...model.tokenize(prompt, false)];
    const next = { token: true, logits: true, options: { temperature: 0 } };
    const first = await sequence.controlledEvaluate(tokens.map((t, i) =>
      i === tokens.length - 1 ? [t, { generateNext: next }] : t));
    const result = first[tokens.length - 1].next;
    if (result.logits.size !== model.fileInfo.metadata.tokenizer.ggml.tokens.length) {
      throw new Error(`${path}: ${result.logits.size} logits returned, not one per vocabulary entry`);
    }
    const top5 = logSoftmaxTop(result.logits, TOP);
    const greedy = [result.token];
    const margins = [margin(result.logits)];
    while (greedy.length < N_GENERATE) {
      const step = await sequence.controlledEvaluate([[greedy.at(-1), { generateNext: next }]]);
      greedy.push(step[0].next.token);
      margins.push(margin(step[0].next.logits));
    }
    out.cases.push({
      prompt,
      tokens,
      top5,
      greedy,
      greedy_margins: margins,
      greedy_text: model.detokenize(greedy, false),
    });
    await context.dispose();
  }
  await model.dispose();
  return out;
}

const args = process.argv.slice(2);
let kvCache = 'F16';
if (args[0] === '--kv-cache') {
  kvCache = args[1];
  args.splice(0, 2);
}
const files = args;
if (files.length === 0 || !['F16', 'F32'].includes(kvCache)) {
  console.error('usage: node llama_goldens.mjs [--kv-cache F16|F32] FILE.gguf [FILE.gguf ...]');
  process.exit(2);
}
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, maxThreads: THREADS });
for (const file of files) {
  const golden = await goldens(llama, file, kvCache);
  const suffix = kvCache === 'F16' ? '.golden.json' : '.kv-f32.golden.json';
  const target = join(dirname(file), basename(file, '.gguf') + suffix);
  // One line per array of numbers and per top-5 entry keeps the files short and their diffs readable.
  const text = JSON.stringify(golden, null, 1)
    .replace(/\[\n\s*([-0-9.e+,\s]+?)\n\s*\]/g, (_, body) => `[${body.split(/,\s*/).join(', ')}]`)
    .replace(/\{\n\s*("id": [^{}]*?)\n\s*\}/g, (_, body) => `{${body.split(/,\n\s*/).join(', ')}}`);
  writeFileSync(target, text + '\n');
  console.log(`${target}: ${golden.cases.map((c) => JSON.stringify(c.greedy_text.slice(0, 40))).join(' | ')}`);
}
await llama.dispose();
