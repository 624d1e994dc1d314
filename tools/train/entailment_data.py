#!/usr/bin/python3
"""Synthetic premise/hypothesis pairs for the word-by-word entailment model (made on the fly; no data files).

    /usr/bin/python3 tools/train/entailment_data.py [--show N] [--seed S]   prints N pairs with their alignments
    /usr/bin/python3 tools/train/entailment_data.py --check [N]             self-test (labels, alignments, split)

Every pair is a dict:
    premise     list of words (lower case), e.g. ["a", "big", "dog", "is", "running", "in", "the", "park"]
    hypothesis  list of words, e.g. ["an", "animal", "is", "running", "in", "the", "park"]
    label       "entailment", "contradiction" or "neutral"
    align       per hypothesis word, the index of the premise word it comes from, or -1 for a word that comes from
                none (an added adjective, "not", an added place); e.g. [0, 2, 3, 4, 5, 6, 7]
    kind        the edit that made the hypothesis (below)

Premises have two forms:
    singular    "a|the [ADJ] NOUN is VERB [PREP the [ADJ] PLACE]"
    quantified  "all|some|no [ADJ] NOUNs are VERB [PREP the PLACE]"
NOUN is a person or an animal ("man", "dog", ...; in a tenth of the premises its hypernym "person"/"animal"), VERB
a present participle, PLACE a place with its preposition.

Edits (each gives the hypothesis and its label by the relation it uses; the label follows from the lexicon and the
quantifier's monotonicity, never from chance):
    entailment      hypernym (dog -> animal; under "all"/"no" a hypernym is neutral, see below), synonym
                    (big -> large, walking -> strolling), drop_adjective, drop_place, verb_hypernym
                    (running -> moving), quantifier_weaken (all -> some)
    contradiction   antonym (big -> small), negation (is -> is not; "not" aligned to nothing), sibling_noun
                    (dog -> cat, man -> woman, boy -> man;
                    not farmer -> man: SIBLINGS; one scene, as SNLI reads its captions), incompatible_verb (sleeping vs running;
                    not under "some" or "no"), quantifier_clash (all|some vs no), other_place (on the beach ->
                    near the river; one scene, so not under a quantifier)
    neutral         add_adjective and hyponym (animal -> dog; neither under "all" or "no", where they entail),
                    add_place, quantifier_strengthen (some -> all),
                    hypernym_downward ("all dogs ..." -> "all animals ...": all and no are downward monotone in
                    their noun, so the hypernym there says more, not less)

Labels are drawn uniformly; within a label, an edit that the premise allows, uniformly. A share of the pairs
(COMPOSED) make two edits on different parts of the sentence, the first an entailment edit, and take the label
their composition gives: entailment + entailment = entailment, entailment + neutral = neutral, entailment +
contradiction = contradiction, neutral + neutral = neutral (kind "first+second"; a neutral edit with a
contradicting one, or two contradicting ones, has no label of its own and is not made). In natural logic's terms
the entailment edits are forward entailments, the neutral ones reverse entailments, the contradicting ones
alternations or negations; their join is the label above, except a forward entailment followed by a reverse one,
which is independence (neutral) only when the parts do not interact: all -> some followed by a neutral edit
("all dogs ..." -> "some big dogs ...") is not made.

Split: a premise is held out when crc32(" ".join(premise)) % 10 == 0 (10 % of premises). Training pairs never come
from a held-out premise, evaluation pairs always do.
"""

import argparse
import random
import zlib

# ---- the lexicon ----

PEOPLE = ["man", "woman", "boy", "girl", "child", "farmer", "doctor", "student"]
ANIMALS = ["dog", "cat", "horse", "cow", "bird", "goat", "rabbit", "duck"]
HYPERNYM = {**{n: "person" for n in PEOPLE}, **{n: "animal" for n in ANIMALS}}
PLURAL = {"child": "children", "man": "men", "woman": "women", "person": "people"}

ADJECTIVES = ["big", "small", "old", "young", "happy", "sad", "fast", "slow", "tall", "short", "wet", "dry"]
ANTONYM = {"big": "small", "small": "big", "old": "young", "young": "old", "happy": "sad", "sad": "happy",
           "fast": "slow", "slow": "fast", "tall": "short", "short": "tall", "wet": "dry", "dry": "wet"}
ADJ_SYNONYM = {"big": "large", "small": "little", "happy": "glad", "fast": "quick", "sad": "unhappy",
               "old": "elderly"}

VERBS = ["running", "walking", "jumping", "swimming", "sleeping", "eating", "sitting", "standing", "playing"]
VERB_SYNONYM = {"walking": "strolling", "jumping": "leaping", "running": "sprinting", "sleeping": "napping"}
VERB_HYPERNYM = {"running": "moving", "walking": "moving", "jumping": "moving", "swimming": "moving"}
# Nouns that cannot name one subject: the animals among themselves; man, woman, boy and girl among themselves and
# with child (boy and girl are children: child is their hypernym, never their sibling). Farmer, doctor and
# student exclude nothing (a farmer may be a man).
SIBLINGS = {**{a: [b for b in ANIMALS if b != a] for a in ANIMALS},
            **{a: [b for b in ("man", "woman", "boy", "girl") if b != a] for a in ("man", "woman", "boy", "girl")}}
SIBLINGS["man"].append("child")
SIBLINGS["woman"].append("child")
SIBLINGS["child"] = ["man", "woman"]

# Pairs that cannot both hold of one subject at one time.
INCOMPATIBLE = {
    "sleeping": ["running", "walking", "jumping", "swimming", "eating", "playing"],
    "sitting": ["standing", "running", "walking", "jumping"],
    "standing": ["sitting", "sleeping", "swimming"],
    "running": ["sleeping", "sitting"],
    "walking": ["sleeping", "sitting"],
    "jumping": ["sleeping", "sitting"],
    "swimming": ["sleeping", "standing"],
    "eating": ["sleeping"],
    "playing": ["sleeping"],
}

PLACES = [("in", "park"), ("in", "garden"), ("near", "river"), ("on", "beach"), ("in", "field"), ("on", "street"),
          ("near", "house"), ("in", "snow")]
PLACE_ADJECTIVES = ["big", "old", "small", "wet", "dry"]

QUANTIFIERS = ["all", "some", "no"]

LABELS = ["entailment", "contradiction", "neutral"]


def vocabulary():
    """Every word the generator can write, in a fixed order: "<pad>" (0), "<unk>" (1), then sorted."""
    words = set(["a", "an", "the", "is", "are", "not"] + QUANTIFIERS + ADJECTIVES + list(ADJ_SYNONYM.values()) +
                VERBS + list(VERB_SYNONYM.values()) + list(VERB_HYPERNYM.values()) + ["person", "animal"])
    for n in PEOPLE + ANIMALS + ["person", "animal"]:
        words.add(n)
        words.add(plural(n))
    for prep, place in PLACES:
        words.update([prep, place])
    return ["<pad>", "<unk>"] + sorted(words)


def plural(noun):
    return PLURAL.get(noun, noun + "s")


def article(word):
    return "an" if word[0] in "aeiou" else "a"


# ---- premises ----

class Sentence:
    """A sentence as its parts; words() lays them out and remembers where each part went."""

    def __init__(self, det, adj, noun, verb, place=None, place_adj=None, negated=False):
        self.det, self.adj, self.noun, self.verb = det, adj, noun, verb
        self.place, self.place_adj, self.negated = place, place_adj, negated

    def quantified(self):
        return self.det in QUANTIFIERS

    def words(self):
        """(words, roles): roles[i] names the part word i shows ("det", "adj", "noun", "aux", "not", "verb",
        "prep", "the", "place_adj", "place")."""
        out, roles = [], []

        def put(word, role):
            out.append(word)
            roles.append(role)

        head = self.adj if self.adj else self.noun
        if self.quantified():
            put(self.det, "det")
        else:
            put(article(head) if self.det == "a" else "the", "det")
        if self.adj:
            put(self.adj, "adj")
        put(plural(self.noun) if self.quantified() else self.noun, "noun")
        put("are" if self.quantified() else "is", "aux")
        if self.negated:
            put("not", "not")
        put(self.verb, "verb")
        if self.place:
            put(self.place[0], "prep")
            put("the", "the")
            if self.place_adj:
                put(self.place_adj, "place_adj")
            put(self.place[1], "place")
        return out, roles

    def copy(self, **changes):
        s = Sentence(self.det, self.adj, self.noun, self.verb, self.place, self.place_adj, self.negated)
        for k, v in changes.items():
            setattr(s, k, v)
        return s


def random_premise(rng):
    quantified = rng.random() < 0.3
    det = rng.choice(QUANTIFIERS) if quantified else rng.choice(["a", "the"])
    noun = rng.choice(PEOPLE + ANIMALS)
    if rng.random() < 0.1:
        noun = HYPERNYM[noun]
    adj = rng.choice(ADJECTIVES) if rng.random() < 0.6 else None
    verb = rng.choice(VERBS)
    place, place_adj = None, None
    if rng.random() < 0.7:
        place = rng.choice(PLACES)
        if not quantified and rng.random() < 0.3:
            place_adj = rng.choice(PLACE_ADJECTIVES)
    return Sentence(det, adj, noun, verb, place, place_adj)


# ---- edits: premise sentence -> (hypothesis sentence, kind, {hypothesis role: premise role}) ----
# Each returns None when the premise does not allow it. Words of the same role are aligned to each other; a role
# mapped to None is aligned to nothing.

def _downward(p):
    return p.det in ("all", "no")


def edit_hypernym(p, rng):
    if p.noun not in HYPERNYM or _downward(p):
        return None
    return p.copy(noun=HYPERNYM[p.noun]), "hypernym"


def edit_synonym(p, rng):
    choices = []
    if p.adj in ADJ_SYNONYM:
        choices.append(p.copy(adj=ADJ_SYNONYM[p.adj]))
    if p.verb in VERB_SYNONYM:
        choices.append(p.copy(verb=VERB_SYNONYM[p.verb]))
    return (rng.choice(choices), "synonym") if choices else None


def edit_drop_adjective(p, rng):
    if not p.adj or _downward(p):
        return None
    return p.copy(adj=None), "drop_adjective"


def edit_drop_place(p, rng):
    if not p.place or p.det == "no":
        return None
    return p.copy(place=None, place_adj=None), "drop_place"


def edit_verb_hypernym(p, rng):
    if p.verb not in VERB_HYPERNYM or p.det == "no":
        return None
    return p.copy(verb=VERB_HYPERNYM[p.verb]), "verb_hypernym"


def edit_quantifier_weaken(p, rng):
    if p.det != "all":
        return None
    return p.copy(det="some"), "quantifier_weaken"


def edit_antonym(p, rng):
    if p.adj not in ANTONYM or p.quantified():
        return None
    return p.copy(adj=ANTONYM[p.adj]), "antonym"


def edit_negation(p, rng):
    if p.quantified():
        return None
    return p.copy(negated=True), "negation"


def edit_sibling_noun(p, rng):
    if p.quantified() or not SIBLINGS.get(p.noun):
        return None
    return p.copy(noun=rng.choice(SIBLINGS[p.noun])), "sibling_noun"


def edit_incompatible_verb(p, rng):
    if p.det in ("some", "no") or p.verb not in INCOMPATIBLE:  # "some dogs are running" and "some dogs are
        return None                                               # sleeping" can both hold
    return p.copy(verb=rng.choice(INCOMPATIBLE[p.verb])), "incompatible_verb"


def edit_quantifier_clash(p, rng):
    if p.det == "no":
        return p.copy(det=rng.choice(["all", "some"])), "quantifier_clash"
    if p.det in ("all", "some"):
        return p.copy(det="no"), "quantifier_clash"
    return None


def edit_other_place(p, rng):
    if not p.place or p.quantified():
        return None
    return p.copy(place=rng.choice([q for q in PLACES if q != p.place]), place_adj=None), "other_place"


def edit_add_adjective(p, rng):
    if p.adj or _downward(p):  # "all dogs ..." entails "all big dogs ..."
        return None
    return p.copy(adj=rng.choice(ADJECTIVES)), "add_adjective"


def edit_hyponym(p, rng):
    if p.noun not in ("person", "animal") or _downward(p):  # "no animals ..." entails "no dogs ..."
        return None
    group = PEOPLE if p.noun == "person" else ANIMALS
    return p.copy(noun=rng.choice(group)), "hyponym"


def edit_add_place(p, rng):
    if p.place or p.det == "no":
        return None
    return p.copy(place=rng.choice(PLACES)), "add_place"


def edit_quantifier_strengthen(p, rng):
    if p.det != "some":
        return None
    return p.copy(det="all"), "quantifier_strengthen"


def edit_hypernym_downward(p, rng):
    if p.noun not in HYPERNYM or not _downward(p):
        return None
    return p.copy(noun=HYPERNYM[p.noun]), "hypernym_downward"


EDITS = {
    "entailment": [edit_hypernym, edit_synonym, edit_drop_adjective, edit_drop_place, edit_verb_hypernym,
                   edit_quantifier_weaken],
    "contradiction": [edit_antonym, edit_negation, edit_sibling_noun, edit_incompatible_verb,
                      edit_quantifier_clash, edit_other_place],
    "neutral": [edit_add_adjective, edit_hyponym, edit_add_place, edit_quantifier_strengthen,
                edit_hypernym_downward],
}


# The part of the sentence each edit changes: two edits of one pair change different parts.
PART = {"hypernym": "noun", "hyponym": "noun", "sibling_noun": "noun", "hypernym_downward": "noun",
        "drop_adjective": "adj", "add_adjective": "adj", "antonym": "adj", "drop_place": "place", "add_place": "place",
        "other_place": "place", "verb_hypernym": "verb", "incompatible_verb": "verb", "quantifier_weaken": "det",
        "quantifier_strengthen": "det", "quantifier_clash": "det", "negation": "not"}
COMPOSED = 0.3
# label -> the (first, second) labels whose edits compose to it.
COMPOSITIONS = {"entailment": [("entailment", "entailment")],
                "neutral": [("entailment", "neutral"), ("neutral", "neutral")],
                "contradiction": [("entailment", "contradiction")]}


def part_of(p, h, kind):
    """The part an edit changed (a synonym changes the adjective or the verb)."""
    if kind != "synonym":
        return PART[kind]
    return "adj" if p.adj != h.adj else "verb"


def one_edit(p, label, rng):
    options = [e for e in EDITS[label] if e(p, random.Random(0)) is not None]
    return rng.choice(options)(p, rng) if options else None


def align(premise_roles, hypothesis_roles):
    """Each hypothesis word to the premise word of the same role (the k-th "the" to the k-th), or -1."""
    where = {}
    for i, r in enumerate(premise_roles):
        where.setdefault(r, []).append(i)
    out = []
    for r in hypothesis_roles:
        out.append(where[r].pop(0) if where.get(r) else -1)
    return out


def held_out(premise_words):
    return zlib.crc32(" ".join(premise_words).encode()) % 10 == 0


def make_pair(rng, label=None):
    """One pair (a dict as in the module's docstring) with the given label, or a random one."""
    label = label or rng.choice(LABELS)
    composed = rng.random() < COMPOSED
    while True:
        p = random_premise(rng)
        if composed:
            first_label, second_label = rng.choice(COMPOSITIONS[label])
            first = one_edit(p, first_label, rng)
            second = first and one_edit(first[0], second_label, rng)
            if not second or part_of(p, first[0], first[1]) == part_of(first[0], second[0], second[1]):
                continue
            if first[1] == "quantifier_weaken" and second_label == "neutral":
                continue
            h, kind = second[0], first[1] + "+" + second[1]
        else:
            edit = one_edit(p, label, rng)
            if not edit:
                continue
            h, kind = edit
        pw, pr = p.words()
        hw, hr = h.words()
        if hw == pw:
            continue
        return {"premise": pw, "hypothesis": hw, "label": label, "align": align(pr, hr), "kind": kind}


def pairs(count, seed, split):
    """`count` pairs of the split ("train": premises not held out; "test": held out), labels balanced."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        pair = make_pair(rng, LABELS[len(out) % 3])
        if held_out(pair["premise"]) == (split == "test"):
            out.append(pair)
    return out


# ---- self-test ----

def check(n):
    vocab = set(vocabulary())
    rng = random.Random(7)
    kinds = {}
    for _ in range(n):
        pair = make_pair(rng)
        p, h, a = pair["premise"], pair["hypothesis"], pair["align"]
        assert set(p) <= vocab and set(h) <= vocab, pair
        assert len(a) == len(h), pair
        for i, j in enumerate(a):
            if j >= 0:
                same = h[i] == p[j]
                related = (p[j], h[i]) in related_words()
                assert same or related, (pair, i, j)
        assert pair["label"] in LABELS
        kinds[pair["kind"]] = kinds.get(pair["kind"], 0) + 1
        # Unaligned words are the edit's additions only.
        unaligned = [h[i] for i, j in enumerate(a) if j < 0]
        assert len(unaligned) <= 4, pair
    every = {e.__name__[5:] for edits in EDITS.values() for e in edits}
    singles = {k for k in kinds if "+" not in k}
    assert singles == every, sorted(every - singles)
    composed = sum(v for k, v in kinds.items() if "+" in k)
    assert 0.2 * n < composed < 0.4 * n, composed
    train, test = pairs(300, 1, "train"), pairs(300, 1, "test")
    assert not {" ".join(t["premise"]) for t in train} & {" ".join(t["premise"]) for t in test}
    assert all(held_out(t["premise"]) for t in test) and not any(held_out(t["premise"]) for t in train)
    for split in (train, test):
        counts = [sum(t["label"] == lab for t in split) for lab in LABELS]
        assert max(counts) - min(counts) <= 1, counts
    print(f"ok: {n} pairs, {len(singles)} edits and {len(kinds) - len(singles)} compositions ({composed} pairs), "
          f"vocabulary of {len(vocab)} words; edits: " +
          ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()) if "+" not in k))


def related_words():
    """(premise word, hypothesis word) pairs an alignment may join besides equal words."""
    rel = set()
    for n, hyper in HYPERNYM.items():
        for a, b in ((n, hyper), (hyper, n), (plural(n), plural(hyper)), (plural(hyper), plural(n))):
            rel.add((a, b))
    rel.update((a, b) for a, bs in SIBLINGS.items() for b in bs)
    rel.update(ANTONYM.items())
    rel.update(ADJ_SYNONYM.items())
    rel.update(VERB_SYNONYM.items())
    rel.update(VERB_HYPERNYM.items())
    rel.update((a, b) for a, bs in INCOMPATIBLE.items() for b in bs)
    rel.update((a, b) for a in ("a", "an", "the") for b in ("a", "an", "the"))
    rel.update((a, b) for a in QUANTIFIERS for b in QUANTIFIERS)
    rel.update((a[i], b[i]) for a in PLACES for b in PLACES for i in (0, 1))
    return rel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check", nargs="?", const=20000, type=int)
    args = ap.parse_args()
    if args.check:
        check(args.check)
        return
    rng = random.Random(args.seed)
    for _ in range(args.show or 10):
        pair = make_pair(rng)
        links = " ".join(f"{w}->{pair['premise'][j] if j >= 0 else '-'}" for w, j in zip(pair["hypothesis"],
                                                                                         pair["align"]))
        print(f"{pair['label']:<13} {pair['kind']:<22} P: {' '.join(pair['premise'])}\n"
              f"{'':36} H: {' '.join(pair['hypothesis'])}\n{'':36} {links}")


if __name__ == "__main__":
    main()
