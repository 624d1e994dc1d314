#!/usr/bin/python3
"""torch peer of bench_seq2seq: the same shipped date model decoding the same 30-character date with beam 5,
every hypothesis keeping its attention rows, in torch (tools/train/seq2seq_torch.py, the code that trained
the model and wrote the parity fixtures), timed, as JSON.

    /usr/bin/python3 -m tests.bench.torch_seq2seq_peer [--threads 2] [--repetitions 5] [--min-time 0.5]
                                                      [--model resources/models/date-bahdanau]

(from the repository root: it imports the tools package, `from tools.train import seq2seq_torch`).

Method as torch_mha_peer.py: torch.no_grad() (beam_search is decorated with it), float32, warm-up, then
`repetitions` samples, each the mean over enough back-to-back decodes to last min-time. "best" is the best
hypothesis' text, which the runner compares with the engine's. Refuses (exit 3) when torch has loaded the
reference BLAS or one it cannot identify (see torch_mha_peer.py).
"""

import argparse
import json
import os
import statistics
import sys

from tests.bench.torch_mha_peer import check_torch_blas, time_calls

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

DATE = "Wednesday, the 3rd of May 2026"  # bench_seq2seq.cpp's kDate; change both together
BEAM = 5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--model", default=os.path.join(ROOT, "resources", "models", "date-bahdanau"))
    args = parser.parse_args()
    assert len(DATE) == 30

    import torch
    from tools.train import seq2seq_torch as s2s

    blas, status = check_torch_blas(torch, args.threads, "torch_seq2seq_peer")
    if status:
        return status
    model = s2s.load_model(args.model, torch.float32)
    ids = s2s.source_ids(DATE, model.config)[: model.config["max_source_length"]]
    decode = lambda: s2s.beam_search(model, ids, BEAM)  # noqa: E731
    best = decode()[0].as_dict(model.config)["text"]
    time_calls(decode, args.min_time)  # warm-up
    samples = [time_calls(decode, args.min_time)[0] * 1e3 for _ in range(args.repetitions)]
    print(json.dumps({"model": os.path.basename(os.path.normpath(args.model)), "threads": torch.get_num_threads(),
                      "blas": blas, "beam": BEAM, "best": best, "ms": samples,
                      "median_ms": statistics.median(samples)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
