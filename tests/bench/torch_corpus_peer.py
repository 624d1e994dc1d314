#!/usr/bin/python3
"""torch peer of a corpus run (issue 46): the same checkpoint as `attnscope-cli corpus --model DIR` (a folder of
config.json and model.safetensors, read with tools/safetensors_io.py and widened to float32 as the engine widens it)
in tools/parity/decoder_torch.py's DecoderForCausalLM (Hugging Face's modules, eager attention, every layer's
attention kept, as output_attentions=True gives it), one input at a time, the engine's statistics of every head
computed from those maps with torch and written to SQLite, one transaction per input, as the engine writes them.

    /usr/bin/python3 -m tests.bench.torch_corpus_peer --checkpoint DIR --ids IDS.jsonl --db OUT.sqlite
                                                     [--threads 2] [--top-k 5]

(from the repository root). IDS.jsonl is tools/golden/corpus_ids.mjs's output: each input's token ids, as the
engine's tokenizer gives them. Prints JSON: inputs, seconds (the loop over the inputs, model load excluded),
inputs_per_second, peak resident set (ru_maxrss). The statistics (attn/analysis/corpus.h), per layer and head, from
the map A (rows i = queries): entropy (1/R) sum_i -sum_j A ln A; mean_distance (1/R) sum_ij A |i - j|;
first_token_mass (1/R) sum_i A[i,0]; max_weight; previous_token, the mean of A[i,i-1] over i >= 1; duplicate_token
and induction over the rows whose token occurred before (NULL without repeats); top pairs: the k strongest weights
over the rows with a choice (i >= 1).
Refuses (exit 3) to time torch over the reference BLAS (see torch_mha_peer.check_torch_blas).
"""

import argparse
import json
import os
import resource
import sqlite3
import sys
import time

STATS = ("entropy", "mean_distance", "first_token_mass", "max_weight", "previous_token", "duplicate_token",
         "induction")


def head_rows(torch, probs, ids):
    """Per head of one layer's maps probs [H, n, n]: the seven statistics (the last two None without repeats)."""
    n = probs.shape[-1]
    pos = torch.arange(n)
    dist = (pos[:, None] - pos[None, :]).abs().to(probs.dtype)
    entropy = -torch.special.xlogy(probs, probs).sum(-1).mean(-1)
    mean_distance = (probs * dist).sum(-1).mean(-1)
    first = probs[:, :, 0].mean(-1)
    max_weight = probs.flatten(1).max(-1).values
    previous = torch.diagonal(probs, offset=-1, dim1=1, dim2=2).mean(-1) if n > 1 else torch.zeros_like(first)
    earlier = (ids[:, None] == ids[None, :]) & (pos[None, :] < pos[:, None])
    rows = earlier.any(-1)
    duplicate = induction = None
    if bool(rows.any()):
        after = torch.zeros_like(earlier)
        after[:, 1:] = earlier[:, :-1]
        after &= pos[None, :] < pos[:, None]
        duplicate = (probs * earlier).sum(-1)[:, rows].mean(-1)
        induction = (probs * after).sum(-1)[:, rows].mean(-1)
    columns = [entropy, mean_distance, first, max_weight, previous, duplicate, induction]
    return [[None if c is None else float(c[h]) for c in columns] for h in range(probs.shape[0])]


def top_pairs(torch, probs, k):
    """Per head: the k strongest (query, key, weight) over rows 1.. (a causal row 0 has no choice)."""
    h, n, _ = probs.shape
    if n < 2 or k == 0:
        return [[] for _ in range(h)]
    flat = probs[:, 1:, :].reshape(h, -1)
    weights, where = torch.topk(flat, min(k, flat.shape[1]), dim=-1)
    return [[(int(where[x, r]) // n + 1, int(where[x, r]) % n, float(weights[x, r])) for r in range(weights.shape[1])]
            for x in range(h)]


def create(db):
    db.executescript(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
        "CREATE TABLE IF NOT EXISTS inputs(id INTEGER PRIMARY KEY, tokens INTEGER);"
        "CREATE TABLE IF NOT EXISTS head_stats(input_id INTEGER, layer INTEGER, head INTEGER, "
        + ", ".join(f"{s} REAL" for s in STATS) + ");"
        "CREATE TABLE IF NOT EXISTS top_pairs(input_id INTEGER, layer INTEGER, head INTEGER, rank INTEGER, "
        "query INTEGER, key INTEGER, weight REAL, query_token TEXT, key_token TEXT);")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--ids", required=True, help="tools/golden/corpus_ids.mjs's output")
    ap.add_argument("--db", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top-k", type=int, default=5)
    args = ap.parse_args()

    import torch
    from tests.bench.torch_mha_peer import check_torch_blas
    from tools.parity import decoder_torch as dt
    from tools.safetensors_io import read_safetensors
    from tests.bench.torch_decoder_peer import forward_last

    _, status = check_torch_blas(torch, args.threads, "torch_corpus_peer")
    if status:
        return status
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        model = dt.build(json.load(f)).eval()
    tensors, _ = read_safetensors(os.path.join(args.checkpoint, "model.safetensors"))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    del tensors
    if os.path.exists(args.db):
        os.remove(args.db)
    db = sqlite3.connect(args.db, isolation_level=None)
    create(db)
    inputs = 0
    start = time.perf_counter()
    with torch.no_grad(), open(args.ids) as lines:
        for line in lines:  # streamed: one input in memory at a time
            record = json.loads(line)
            ids = torch.tensor(record["ids"])
            _, maps = forward_last(torch, model, ids)
            stats, pairs = [], []
            for layer, probs in enumerate(maps):
                for head, row in enumerate(head_rows(torch, probs, ids)):
                    stats.append((record["id"], layer, head, *row))
                for head, best in enumerate(top_pairs(torch, probs, args.top_k)):
                    pairs += [(record["id"], layer, head, r, q, k, w, str(int(ids[q])), str(int(ids[k])))
                              for r, (q, k, w) in enumerate(best)]
            db.execute("BEGIN")
            db.execute("INSERT INTO inputs VALUES (?, ?)", (record["id"], len(record["ids"])))
            db.executemany(f"INSERT INTO head_stats VALUES ({', '.join('?' * (3 + len(STATS)))})", stats)
            db.executemany("INSERT INTO top_pairs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", pairs)
            db.execute("COMMIT")
            inputs += 1
    seconds = time.perf_counter() - start
    db.close()
    print(json.dumps({"inputs": inputs, "seconds": seconds, "inputs_per_second": inputs / seconds,
                      "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
