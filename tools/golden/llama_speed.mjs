// llama.cpp's speed on a GGUF file, the peer of tests/bench/bench_gguf.cpp (issue 45; tests/bench/run_gguf_vs_llama.sh
// runs both): node-llama-cpp (pinned in package.json; llama.cpp's prebuilt CPU libraries, no GPU) timing
//   prompt:512   512 token ids evaluated in one batch into a fresh context (no token generated);
//   generate:N   a 16-token prompt, then N greedy tokens (temperature 0), the whole call timed as the engine's is.
// The ids are the engine bench's: (7919 i + 13) mod vocabulary. Prints one JSON object: the median seconds of each
// case over `repetitions`, and tokens per second.
//
//   cd tools/golden && npm install --ignore-scripts && node llama_speed.mjs FILE.gguf [threads] [repetitions]
import { basename } from 'path';
import { performance } from 'perf_hooks';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

const [file, threadsArg, repsArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node llama_speed.mjs FILE.gguf [threads] [repetitions]');
  process.exit(2);
}
const THREADS = Number(threadsArg ?? 2);
const REPS = Number(repsArg ?? 5);
const ids = (n, vocab) => Array.from({ length: n }, (_, i) => (7919 * i + 13) % vocab);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const llama = await getLlama({ gpu: false, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: file, gpuLayers: 0, useMmap: true });
const vocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;

async function timed(run) {
  const context = await model.createContext({ contextSize: 1024, batchSize: 512, threads: THREADS, sequences: 1,
                                              flashAttention: false });
  const sequence = context.getSequence();
  const t0 = performance.now();
  await run(sequence);
  const seconds = (performance.now() - t0) / 1000;
  await context.dispose();
  return seconds;
}

const out = { file: basename(file), threads: THREADS, repetitions: REPS, cpu: llama.systemInfo.trim(), cases: {} };
const prompt = ids(512, vocab);
await timed((s) => s.evaluateWithoutGeneratingNewTokens(prompt));  // warm-up: pages, threads
const p = [];
for (let r = 0; r < REPS; ++r) p.push(await timed((s) => s.evaluateWithoutGeneratingNewTokens(prompt)));
out.cases['prompt:512'] = { seconds: median(p), tokens_per_second: 512 / median(p) };
for (const n of [128, 256]) {
  const g = [];
  for (let r = 0; r < REPS; ++r) {
    g.push(await timed(async (s) => {
      let made = 0;
      for await (const token of s.evaluate(ids(16, vocab), { temperature: 0 })) {
        if (++made >= n) break;
      }
    }));
  }
  out.cases[`generate:${n}`] = { seconds: median(g), tokens_per_second: n / median(g) };
}
await model.dispose();
console.log(JSON.stringify(out));
