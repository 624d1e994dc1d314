#!/usr/bin/python3
"""torch peer of bench_applications: the shipped entailment model on the same premise and hypothesis, and the shipped
ConvS2S date model's beam of 5 on the same date and the headline model's on the same sentence, in torch (tools/train/entailment_torch.py and seq2seq_torch.py's
beam_search over convs2s_torch.py: the code that trained the models and wrote the parity fixtures), timed, as JSON.

    /usr/bin/python3 -m tests.bench.torch_applications_peer [--threads 2] [--repetitions 5] [--min-time 0.5]
                                                           [--model resources/models/entailment-wbw]

(from the repository root: it imports the tools package, `from tools.train import seq2seq_torch`).

Method as torch_mha_peer.py: torch.no_grad(), float32, warm-up, then `repetitions` samples, each the mean over
enough back-to-back runs to last min-time. Per application {"median_ms", "answer"}: the answer (the label, the best
hypothesis' text) is what the runner compares with the engine's.
Refuses (exit 3) when torch has loaded the reference BLAS or one it cannot identify (see torch_mha_peer.py).
"""

import argparse
import json
import os
import statistics
import sys

from tests.bench.torch_mha_peer import check_torch_blas, time_calls

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# bench_applications.cpp's kPremise, kHypothesis and kDate; change both together.
PREMISE = "a young man is sleeping on the beach near the river"
HYPOTHESIS = "the young person is not sleeping on the beach near the river"
DATE = "Saturday, 21 November 2026"
SPEECH_WAV = os.path.join(ROOT, "tests", "data", "audio", "apples-2s.wav")   # bench_applications' kSpeechWav
SENTENCE = ("Voters in Dublin elected Grace Kim as their new mayor on Sunday, ending 12 years of the old council, in a "
            "decision that was welcomed by local business leaders and residents.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--model", default=os.path.join(ROOT, "resources", "models", "entailment-wbw"))
    args = parser.parse_args()

    import torch
    from tools.train import entailment_torch as et
    from tools.train import seq2seq_torch as st

    blas, status = check_torch_blas(torch, args.threads, "torch_applications_peer")
    if status:
        return status
    model, config = et.load_model(args.model)
    pair = [{"premise": PREMISE.split(), "hypothesis": HYPOTHESIS.split()}]
    assert len(pair[0]["premise"]) == 11 and len(pair[0]["hypothesis"]) == 12

    def run():
        with torch.no_grad():
            return model(*et.batch(config, pair))

    def timed(call):
        time_calls(call, args.min_time)  # warm-up
        samples = [time_calls(call, args.min_time)[0] * 1e3 for _ in range(args.repetitions)]
        return {"ms": samples, "median_ms": statistics.median(samples)}

    date_model = st.load_model(os.path.join(ROOT, "resources", "models", "date-convs2s"), torch.float32)
    date_ids = st.source_ids(DATE, date_model.config)

    def decode():
        return st.beam_search(date_model, date_ids, 5)

    headline_model = st.load_model(os.path.join(ROOT, "resources", "models", "headlines-gru"), torch.float32)
    sentence_ids = st.source_ids(SENTENCE, headline_model.config)
    assert len(sentence_ids) == 31

    def summarise():
        return st.beam_search(headline_model, sentence_ids, 5)

    from tools.parity import make_speech_fixtures as msf
    from tools.train import speech_torch as sp
    speech_model = st.load_model(os.path.join(ROOT, "resources", "models", "speech-location"), torch.float32)
    frames = sp.cut(sp.log_mel(msf.read_wav(SPEECH_WAV)).float(), speech_model.config)

    def recognise():
        return st.beam_search(speech_model, frames, 5)

    result = {"threads": torch.get_num_threads(), "blas": blas,
              "entailment": {"model": os.path.basename(os.path.normpath(args.model)),
                             "answer": et.LABELS[int(run()[0].argmax())], **timed(run)},
              "convs2s": {"model": "date-convs2s", "answer": st.target_text(decode()[0].ids, date_model.config),
                          **timed(decode)},
              "headlines": {"model": "headlines-gru",
                            "answer": st.target_text(summarise()[0].ids, headline_model.config), **timed(summarise)},
              "speech": {"model": "speech-location", "answer": st.target_text(recognise()[0].ids, speech_model.config),
                         **timed(recognise)}}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
