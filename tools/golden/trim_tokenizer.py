#!/usr/bin/env python3
"""Cut a real tokenizer.json down to what the golden texts can reach, so tests/data stays small.

    python3 tools/golden/trim_tokenizer.py FULL.json GOLDEN.json OUT.json

GOLDEN.json is golden_tokens.mjs's output for FULL.json; its texts (and pairs) are the ones kept reachable.
A vocabulary entry is kept when it could be a piece of one of those texts: a substring of the text in any
Unicode normal form, spelled as the models spell text (the byte-level alphabet, with and without a leading
space; SentencePiece's "▁" for spaces, with one in front), ignoring a WordPiece "##". Byte-fallback entries
("<0x41>"), single characters, the unknown token and the added tokens are always kept, and so is every merge
whose two halves and result are kept. A merge that is dropped makes a pair that never occurs in these texts,
so it never wins: the trimmed file tokenizes the golden texts exactly as the full one (golden_tokens.mjs run
again on OUT.json must give the same ids; make_goldens.sh checks it). Ids keep their values.
"""
import json
import sys
import unicodedata


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


BYTE_CHARS = bytes_to_unicode()


def spellings(text):
    forms = {text}
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        forms.add(unicodedata.normalize(form, text))
    forms |= {f.lower() for f in forms}
    forms |= {"".join(c for c in unicodedata.normalize("NFD", f) if not unicodedata.combining(c)) for f in forms}
    out = set()
    for f in forms:
        out.add(f)
        out.add("\u2581" + f.replace(" ", "\u2581"))
        out.add(f.replace(" ", "\u2581"))
        for prefix in ("", " "):
            out.add("".join(BYTE_CHARS[b] for b in (prefix + f).encode("utf-8")))
    return out


def main():
    full_path, golden_path, out_path = sys.argv[1:4]
    with open(full_path, encoding="utf-8") as f:
        tok = json.load(f)
    with open(golden_path, encoding="utf-8") as f:
        golden = json.load(f)
    texts = []
    for t in golden["tokenizers"]:
        texts += [c["text"] for c in t["cases"]]
        for p in t.get("pairs", []):
            texts += [p["text"], p["pair"]]
    haystack = "\x00".join(sorted(set().union(*(spellings(t) for t in texts))))

    model = tok["model"]
    keep_always = {a["content"] for a in tok.get("added_tokens", [])}
    if model.get("unk_token"):
        keep_always.add(model["unk_token"])

    def wanted(entry):
        if entry in keep_always or len(entry) == 1:
            return True
        if len(entry) == 6 and entry.startswith("<0x") and entry.endswith(">"):
            return True
        core = entry[2:] if entry.startswith("##") else entry
        return core in haystack

    if model["type"] == "Unigram":
        model["vocab"] = [v if wanted(v[0]) else v for v in model["vocab"]]  # ids are positions: nothing dropped
    else:
        model["vocab"] = {k: v for k, v in model["vocab"].items() if wanted(k)}
        # The library numbers added tokens missing from model.vocab from the vocabulary's size on, whatever ids
        # the file gives them: in a trimmed vocabulary they would move. Listed in model.vocab with their ids,
        # they keep them (no merge makes them, so the model never produces them itself).
        for a in tok.get("added_tokens", []):
            model["vocab"].setdefault(a["content"], a["id"])
    if "merges" in model:
        kept = []
        for m in model["merges"]:
            a, b = m.split(" ") if isinstance(m, str) else m
            if a in model["vocab"] and b in model["vocab"] and (a + b) in model["vocab"]:
                kept.append(m)
        model["merges"] = kept
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"{out_path}: {len(model['vocab'])} entries, {len(model.get('merges', []))} merges")


if __name__ == "__main__":
    main()
