#!/usr/bin/env python3
"""Write the tokenizer.json files the golden tests run, besides the trimmed real ones:

    python3 tools/golden/make_tokenizers.py OUT_DIR

- bert.json, gpt2.json: BERT uncased and GPT-2 as tokenizer.json, from tests/data/tokenizers' vocab.txt and
  vocab.json + merges.txt, with the components Hugging Face's own conversions write (BertNormalizer,
  BertPreTokenizer, WordPiece, TemplateProcessing; ByteLevel everywhere for GPT-2).
- small_*.json: small hand-written tokenizers, each exercising components the real ones do not use (Unigram,
  WordLevel, every Split behaviour and invert, Metaspace's prepend schemes, Digits, Punctuation, Whitespace,
  Replace with a regex, Prepend, NFKC/NFKD, Strip, BertProcessing, RobertaProcessing, pair templates, added
  tokens with lstrip/rstrip/single_word/normalized, BPE with a continuing-subword prefix and an end-of-word
  suffix, ignore_merges).

Golden ids for all of them come from Hugging Face's library (golden_tokens.mjs), never from this script.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "tokenizers")


def added(content, id, special=True, lstrip=False, rstrip=False, normalized=False, single_word=False):
    return {"id": id, "content": content, "single_word": single_word, "lstrip": lstrip, "rstrip": rstrip,
            "normalized": normalized, "special": special}


def tokenizer(model, normalizer=None, pre=None, post=None, decoder=None, added_tokens=()):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added_tokens),
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": post, "decoder": decoder,
            "model": model}


def bytes_to_unicode():
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def bpe_vocab(alphabet, words, prefix="", suffix=""):
    """A vocabulary of `alphabet` and merges that build each word left to right."""
    vocab, merges = {}, []
    for a in alphabet:
        vocab.setdefault(a, len(vocab))
    for word in words:
        symbols = [c if i == 0 else prefix + c for i, c in enumerate(word)]
        if suffix:
            symbols[-1] += suffix
        for s in symbols:
            vocab.setdefault(s, len(vocab))
        left = symbols[0]
        for right in symbols[1:]:
            joined = left + right[len(prefix):]
            if joined not in vocab:
                vocab[joined] = len(vocab)
                merges.append([left, right])
            left = joined
    return vocab, merges


def bpe_model(vocab, merges, **options):
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
             "vocab": vocab, "merges": merges}
    model.update(options)
    return model


def template(single, pair, specials):
    def items(spec):
        out = []
        for part in spec.split():
            name, _, type_id = part.partition(":")
            type_id = int(type_id or 0)
            if name in ("$A", "$B"):
                out.append({"Sequence": {"id": name[1], "type_id": type_id}})
            else:
                out.append({"SpecialToken": {"id": name, "type_id": type_id}})
        return out
    return {"type": "TemplateProcessing", "single": items(single), "pair": items(pair),
            "special_tokens": {name: {"id": name, "ids": [id], "tokens": [name]} for name, id in specials}}


WORDS = ["the", "and", "hello", "world", "leading", "space", "spaces", "trailing", "line", "one", "two", "number",
         "numbers", "sure", "see", "can", "don", "they", "comment", "return", "example", "user", "query", "path",
         "super", "cali", "fragil", "istic", "expi", "ali", "docious", "caf", "na", "ive", "emoji", "literal",
         "tab", "bed", "windows", "control", "bell", "zero", "width", "here", "vs", "def", "com", "org", "http"]


BYTE_LEVEL_DECODER = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}


def byte_level(out):
    table = bytes_to_unicode()
    alphabet = [table[b] for b in range(256)]
    words = ["\u0120" + w for w in WORDS] + WORDS + ["\u0120\u0120", "\u010a\u010a", "12", "123", "\u0120(", ");"]
    vocab, merges = bpe_vocab(alphabet, words)
    n = len(vocab)
    specials = [added("<s>", n), added("</s>", n + 1), added("<pad>", n + 2),
                added("<mask>", n + 3, lstrip=True), added("<|endoftext|>", n + 4)]

    # Every Split behaviour (and invert) over the same pattern, then the bytes; no merges across pieces.
    for behaviour in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
        for invert in (False, True):
            name = f"small_split_{behaviour.lower()}{'_invert' if invert else ''}.json"
            pre = {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": r"\p{N}+|[,.!?]"}, "behavior": behaviour, "invert": invert},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}
            write(out, name, tokenizer(bpe_model(vocab, merges), pre=pre,
                                       decoder=BYTE_LEVEL_DECODER, added_tokens=specials))
    # Llama 3's pattern ((?i:...), \p{N}{1,3}) with ignore_merges, a string Split, and RobertaProcessing.
    llama3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
              r"\s*[\r\n]+|\s+(?!\S)|\s+")
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": llama3}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    write(out, "small_llama3_split.json",
          tokenizer(bpe_model(vocab, merges, ignore_merges=True), pre=pre, decoder=BYTE_LEVEL_DECODER,
                    post={"type": "Sequence", "processors": [
                        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
                        template("<|endoftext|> $A", "<|endoftext|> $A <|endoftext|>:1 $B:1",
                                 [("<|endoftext|>", n + 4)])]},
                    added_tokens=specials))
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]}
    write(out, "small_roberta.json",
          tokenizer(bpe_model(vocab, merges), pre=pre, decoder=BYTE_LEVEL_DECODER,
                    post={"type": "RobertaProcessing", "sep": ["</s>", n + 1], "cls": ["<s>", n],
                          "trim_offsets": True, "add_prefix_space": True},
                    added_tokens=specials))


def sentencepiece_like(out):
    # Character-level BPE with byte fallback, "▁" for spaces, as SentencePiece's BPE models.
    alphabet = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    alphabet += list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'():;-\u2581")
    words = ["\u2581" + w for w in WORDS] + WORDS + ["\u2581\u2581"]
    vocab, merges = bpe_vocab(alphabet, words)
    specials = [added("<unk>", 0), added("<s>", 1), added("</s>", 2), added("[BRK]", len(vocab), single_word=True),
                added("xx", len(vocab) + 1, special=False, normalized=True)]
    model = bpe_model(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    decoder = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "\u2581",
                                                                          "prepend_scheme": "always", "split": True}]}
    for scheme in ("always", "first", "never"):
        write(out, f"small_metaspace_{scheme}.json",
              tokenizer(model, normalizer={"type": "Lowercase"},
                        pre={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme,
                             "split": scheme != "never"},
                        post=template("<s> $A </s>", "<s> $A </s> $B:1 </s>:1", [("<s>", 1), ("</s>", 2)]),
                        decoder=decoder, added_tokens=specials))
    # Normalizers in sequence: NFKC, a regex Replace, Prepend, Strip; decoders Replace, ByteFallback, Fuse, Strip.
    write(out, "small_prepend_replace.json",
          tokenizer(model,
                    normalizer={"type": "Sequence", "normalizers": [
                        {"type": "Strip", "strip_left": False, "strip_right": True},
                        {"type": "NFKC"},
                        {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
                        {"type": "Prepend", "prepend": "\u2581"},
                        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
                    post=template("<s> $A", "<s> $A <s>:1 $B:1", [("<s>", 1)]),
                    decoder={"type": "Sequence", "decoders": [
                        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                        {"type": "ByteFallback"}, {"type": "Fuse"},
                        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
                    added_tokens=specials))
    # A continuing-subword prefix and an end-of-word suffix (BPE as in the original subword-nmt).
    letters = list("abcdefghijklmnopqrstuvwxyz")
    alphabet = ["<unk>"] + letters + ["##" + c for c in letters] + [c + "</w>" for c in letters] + \
               ["##" + c + "</w>" for c in letters]
    vocab, merges = bpe_vocab(alphabet, WORDS, prefix="##", suffix="</w>")
    write(out, "small_bpe_affixes.json",
          tokenizer(bpe_model(vocab, merges, unk_token="<unk>", continuing_subword_prefix="##",
                              end_of_word_suffix="</w>"),
                    normalizer={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                "strip_accents": None, "lowercase": True},
                    pre={"type": "Whitespace"}, added_tokens=[added("<unk>", 0)]))


def unigram(out):
    pieces = [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0]] + [[f"<0x{b:02X}>", 0.0] for b in range(256)]
    score = -2.0
    for c in "\u2581abcdefghijklmnopqrstuvwxyz.,!?'0123456789":
        pieces.append([c, -8.0])
    for w in WORDS:
        for piece in ("\u2581" + w, w, w[:3], w[3:]):
            if piece and piece not in [p[0] for p in pieces]:
                score -= 0.17
                pieces.append([piece, round(score, 3)])
    model = {"type": "Unigram", "unk_id": 0, "vocab": pieces, "byte_fallback": True}
    write(out, "small_unigram.json",
          tokenizer(model,
                    normalizer={"type": "Sequence", "normalizers": [
                        {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"},
                        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
                    pre={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
                    post=template("$A </s>", "$A </s> $B:1 </s>:1", [("</s>", 2)]),
                    decoder={"type": "Sequence", "decoders": [
                        {"type": "ByteFallback"},
                        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}]},
                    added_tokens=[added("<unk>", 0), added("<s>", 1), added("</s>", 2)]))
    # Unigram without byte fallback: unknown characters fuse into one <unk>.
    model = {"type": "Unigram", "unk_id": 0, "vocab": [p for p in pieces if not p[0].startswith("<0x")]}
    write(out, "small_unigram_unk.json",
          tokenizer(model, normalizer={"type": "NFC"},
                    pre={"type": "Sequence", "pretokenizers": [
                        {"type": "Punctuation", "behavior": "Isolated"},
                        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}]},
                    decoder={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
                    added_tokens=[added("<unk>", 0), added("<s>", 1), added("</s>", 2)]))


def word_level(out):
    words = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"] + WORDS + list(",.!?:;'()-#&/=@*<>[]|") + \
            [str(d) for d in range(10)] + ["12", "123", "1234"]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    specials = [added("[UNK]", 0), added("[CLS]", 1), added("[SEP]", 2), added("[PAD]", 3),
                added("[MASK]", 4, lstrip=True, rstrip=True)]
    write(out, "small_wordlevel.json",
          tokenizer({"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
                    normalizer={"type": "Sequence", "normalizers": [
                        {"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]},
                    pre={"type": "Sequence", "pretokenizers": [
                        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Contiguous"},
                        {"type": "Digits", "individual_digits": False}]},
                    post={"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
                    added_tokens=specials))
    write(out, "small_wordpiece_digits.json",
          tokenizer({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                     "max_input_chars_per_word": 12,
                     "vocab": {**vocab, **{"##" + c: len(vocab) + i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}}},
                    normalizer={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                "strip_accents": True, "lowercase": False},
                    pre={"type": "Sequence", "pretokenizers": [
                        {"type": "Whitespace"}, {"type": "Digits", "individual_digits": True},
                        {"type": "Punctuation", "behavior": "MergedWithPrevious"}]},
                    post=template("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", [("[CLS]", 1), ("[SEP]", 2)]),
                    decoder={"type": "WordPiece", "prefix": "##", "cleanup": True},
                    added_tokens=specials))


def real(out):
    with open(os.path.join(DATA, "bert_base_uncased_vocab.txt"), encoding="utf-8") as f:
        vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
    specials = [added(t, vocab[t]) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
    write(out, "bert.json",
          tokenizer({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                     "max_input_chars_per_word": 100, "vocab": vocab},
                    normalizer={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                "strip_accents": None, "lowercase": True},
                    pre={"type": "BertPreTokenizer"},
                    post=template("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", [("[CLS]", 101), ("[SEP]", 102)]),
                    decoder={"type": "WordPiece", "prefix": "##", "cleanup": True}, added_tokens=specials))
    with open(os.path.join(DATA, "gpt2_bpe_encoder.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(DATA, "gpt2_bpe_vocab.bpe"), encoding="utf-8") as f:
        merges = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#version")]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    write(out, "gpt2.json",
          tokenizer(bpe_model(vocab, merges, continuing_subword_prefix="", end_of_word_suffix=""),
                    pre=byte_level, post=byte_level, decoder=byte_level,
                    added_tokens=[added("<|endoftext|>", 50256, normalized=True)]))


def write(out, name, tok):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    real(out)
    byte_level(out)
    sentencepiece_like(out)
    unigram(out)
    word_level(out)


if __name__ == "__main__":
    main()
