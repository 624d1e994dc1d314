#!/usr/bin/python3
"""Synthetic news sentences and their headlines for the summarisation model (made on the fly; no data files).

    /usr/bin/python3 -m tools.train.headlines_data [--show N] [--seed S]   prints N pairs with their alignments
    /usr/bin/python3 -m tools.train.headlines_data --check [N]             self-test (alignments, split, lengths)

Every pair is a dict:
    text        the sentence as a reader sees it ("Police in Leeds arrested a 23-year-old man on Monday after ...")
    source      its words as the model reads them: MODELS.md section 1's word unit (reviews_data.split_words,
                lower case, [a-z0-9']+, the sentence's terminators dropped)
    headline    the headline's words, e.g. ["leeds", "police", "arrest", "man", "after", "robbery"]
    align       per headline word, the index of the source word it comes from: copied ("leeds"), or said another
                way (the headline's "arrest" from the source's "arrested", "to" from "will", "prices" from "price")
    kind        the event (below)

Events, each with its sentence forms and one headline form: opening, plan, arrest, match, weather, price, resign,
election. The sentences vary by synonyms ("said", "announced", "confirmed"), optional clauses the headline drops
(when: "on Monday", "last week"; who said it: "officials said", "according to the council"; an added detail after
a comma), two orders where the event allows ("X said on Monday that ..." and "... , X said on Monday") and copied
names (people, cities, teams, companies). Headlines are in headline style: present tense for the past ("arrested"
-> "arrest"), "to" for "will", no articles, no time.

Split: a pair is held out when crc32 of its event and its main names (kind|name|city) % 10 == 0. Training pairs never
come from a held-out key; evaluation pairs always do.
"""

import argparse
import random
import zlib

from tools.train.reviews_data import split_words

DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
CITIES = ["leeds", "bristol", "glasgow", "cardiff", "lyon", "munich", "porto", "naples", "dublin", "oslo", "boston",
          "denver", "toronto", "osaka", "madrid", "vienna", "krakow", "seville", "hamburg", "geneva"]
REGIONS = ["the north", "the south", "the east", "the west", "the highlands", "the valley", "the coast"]
COMPANIES = ["acme", "nordtek", "solara", "brightway", "veltro", "kestrel", "orbis", "halden", "tavira", "zenith"]
PEOPLE = [("maria", "lopez"), ("john", "smith"), ("anna", "berg"), ("david", "okafor"), ("lena", "fischer"),
          ("omar", "haddad"), ("sofia", "rossi"), ("peter", "novak"), ("grace", "kim"), ("lucas", "martin"),
          ("elena", "petrova"), ("samuel", "adeyemi")]
SHE = {"maria", "anna", "lena", "sofia", "grace", "elena"}
TEAMS = ["united", "rovers", "county", "athletic", "wanderers", "albion", "rangers", "dynamo"]
FACILITIES = ["factory", "hospital", "school", "library", "station", "bridge", "museum", "stadium", "warehouse"]
THINGS = [("jobs", "jobs"), ("homes", "homes"), ("stores", "stores"), ("trains", "trains"), ("buses", "buses"),
          ("schools", "schools"), ("clinics", "clinics")]
PLAN_VERBS = [("build", "build"), ("open", "open"), ("create", "create"), ("cut", "cut"), ("add", "add")]
CRIMES = ["robbery", "fire", "crash", "fight", "break-in", "attack", "chase"]
WEATHER = [("snow", "snow"), ("flooding", "flooding"), ("fog", "fog"), ("ice", "ice"), ("storms", "storms")]
CLOSED = [("roads", "roads"), ("schools", "schools"), ("airports", "airports"), ("bridges", "bridges"),
          ("railways", "railways")]
GOODS = ["bread", "petrol", "coffee", "milk", "rent", "electricity", "gas", "butter"]
ROLES = [("chief", "executive"), ("head", "coach"), ("party", "leader"), ("board", "chair"), ("team", "captain")]
EVENTS_WON = ["the cup final", "the league", "the derby", "the semi final", "the opening game"]
SAYERS = [["officials"], ["the", "council"], ["the", "company"], ["a", "spokesman"], ["the", "police"]]
SAID = ["said", "announced", "confirmed"]
NUMBERS = [str(n) for n in (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 100, 200, 300, 500)]
DETAILS = [["the", "first", "in", "ten", "years"], ["despite", "strong", "opposition"],
           ["after", "months", "of", "talks"], ["in", "a", "surprise", "move"], ["as", "expected"],
           ["according", "to", "a", "statement", "released", "by", "the", "city", "council", "late", "in", "the",
            "evening"],
           ["in", "a", "decision", "that", "was", "welcomed", "by", "local", "business", "leaders", "and", "residents"],
           ["which", "critics", "say", "will", "do", "little", "to", "help", "the", "people", "who", "need", "it",
            "most"]]


class Pair:
    """A sentence built word by word, each word remembered by name for the headline to point at."""

    def __init__(self, kind):
        self.kind, self.words, self.at, self.headline, self.align = kind, [], {}, [], []

    def add(self, words, name=None):
        words = words.split() if isinstance(words, str) else list(words)
        if name is not None:
            self.at[name] = list(range(len(self.words), len(self.words) + len(words)))
        self.words += words
        return self

    def head(self, word, name, k=0):
        """A headline word from word k of the source part `name` (copied or said another way)."""
        self.headline.append(word)
        self.align.append(self.at[name][k])
        return self

    def copy(self, name):
        for k, i in enumerate(self.at[name]):
            self.head(self.words[i], name, k)
        return self


def when(rng):
    return rng.choice([["on", rng.choice(DAYS)], ["last", "week"], ["this", "morning"], ["on", rng.choice(DAYS)],
                       ["in", rng.choice(MONTHS)]])


def said_by(rng):
    return rng.choice(SAYERS) + [rng.choice(SAID)]


def detail(rng, p):
    if rng.random() < 0.4:
        p.add(rng.choice(DETAILS))


def opening(rng):
    org, city, fac = rng.choice(COMPANIES), rng.choice(CITIES), rng.choice(FACILITIES)
    p = Pair("opening")
    if rng.random() < 0.5:
        p.add(org, "org").add("opened" if rng.random() < 0.7 else "has opened", "verb").add("a new").add(fac, "fac")
        p.add("in").add(city, "city")
        if rng.random() < 0.6:
            p.add(when(rng))
        detail(rng, p)
    else:
        p.add("a new").add(fac, "fac").add("was opened in").add(city, "city")
        p.add("by").add(org, "org")
        if rng.random() < 0.6:
            p.add(when(rng))
        p.at["verb"] = [p.words.index("opened")]
    p.copy("org").head("opens", "verb", len(p.at["verb"]) - 1).head("new", "fac", 0)
    p.headline[-1], p.align[-1] = "new", p.at["fac"][0] - 1
    p.copy("fac").head("in", "city").copy("city")
    p.align[-2] = p.at["city"][0] - 1
    return p, f"opening|{org}|{city}"


def plan(rng):
    org, city = rng.choice(COMPANIES), rng.choice(CITIES)
    verb, num, (things, _) = rng.choice(PLAN_VERBS)[0], rng.choice(NUMBERS), rng.choice(THINGS)
    p = Pair("plan")
    front = rng.random() < 0.5
    if front:
        p.add(org, "org").add(rng.choice(SAID))
        if rng.random() < 0.5:
            p.add(when(rng))
        p.add("that it")
    else:
        p.add(org, "org")
    p.add("will", "will").add(verb, "verb").add(num, "num").add("new" if rng.random() < 0.5 else []).add(things, "things")
    p.add("in").add(city, "city")
    if rng.random() < 0.5:
        p.add(rng.choice([["next", "year"], ["by", "2030"], ["this", "year"]]))
    if not front and rng.random() < 0.5:
        p.add(said_by(rng))
    detail(rng, p)
    p.copy("org").head("to", "will").copy("verb").copy("num").copy("things").head("in", "city").copy("city")
    p.align[-2] = p.at["city"][0] - 1
    return p, f"plan|{org}|{city}"


def arrest(rng):
    city, crime, age = rng.choice(CITIES), rng.choice(CRIMES), str(rng.randint(18, 70))
    who = rng.choice(["man", "woman", "teenager"]) if int(age) >= 20 else "teenager"
    p = Pair("arrest")
    p.add("police in").add(city, "city").add("arrested", "verb").add("a").add(f"{age}-year-old".replace("-", " "))
    p.add(who, "who")
    if rng.random() < 0.6:
        p.add(when(rng))
    p.add("after a").add(crime.replace("-", " "), "crime")
    if rng.random() < 0.4:
        p.add(["near", "the", rng.choice(FACILITIES)])
    detail(rng, p)
    p.copy("city").head("police", "city").head("arrest", "verb").copy("who").head("after", "crime").copy("crime")
    p.align[1] = p.at["city"][0] - 2          # "police" of "police in <city>"
    p.align[-1 - (len(p.at["crime"]) - 1) - 1] = p.at["crime"][0] - 2   # "after" of "after a <crime>"
    return p, f"arrest|{city}|{crime}"


def match(rng):
    a, b = rng.sample(TEAMS, 2)
    ca, cb = rng.sample(CITIES, 2)
    event = rng.choice(EVENTS_WON)
    score = [str(rng.randint(1, 5)), str(rng.randint(0, 4))]
    if int(score[1]) >= int(score[0]):
        score[1] = str(int(score[0]) - 1)
    p = Pair("match")
    p.add(ca, "ca").add(a, "a").add("beat" if rng.random() < 0.5 else "defeated", "verb").add(cb, "cb").add(b, "b")
    p.add(score).add("in").add(event, "event")
    if rng.random() < 0.6:
        p.add(when(rng))
    detail(rng, p)
    p.copy("ca").copy("a").head("beat", "verb").copy("cb").copy("b").head("in", "event")
    p.align[-1] = p.at["event"][0] - 1
    p.copy("event")
    # Headlines drop the article of the event ("the cup final" -> "cup final").
    if p.headline[-len(p.at["event"])] == "the":
        i = len(p.headline) - len(p.at["event"])
        del p.headline[i], p.align[i]
    return p, f"match|{ca}|{cb}"


def weather(rng):
    (w, _), num, (closed, _) = rng.choice(WEATHER), rng.choice(NUMBERS), rng.choice(CLOSED)
    region = rng.choice(REGIONS + CITIES)
    p = Pair("weather")
    p.add("heavy" if w in ("snow", "flooding", "fog") and rng.random() < 0.5 else []).add(w, "w")
    p.add("closed", "verb").add(num, "num").add(closed, "closed").add("in", "in").add(region, "region")
    if rng.random() < 0.6:
        p.add(when(rng))
    if rng.random() < 0.4:
        p.add(said_by(rng))
    detail(rng, p)
    p.copy("w").head("closes", "verb").copy("num").copy("closed").head("in", "in")
    p.copy("region")
    if p.headline[-len(p.at["region"])] == "the":
        i = len(p.headline) - len(p.at["region"])
        del p.headline[i], p.align[i]
    return p, f"weather|{w}|{region}"


def price(rng):
    good, num, month = rng.choice(GOODS), rng.choice(NUMBERS[:9]), rng.choice(MONTHS)
    up = rng.random() < 0.5
    p = Pair("price")
    p.add("the price of").add(good, "good").add("rose" if up else "fell", "verb").add("by").add(num, "num")
    p.add("percent", "pct").add("in").add(month)
    if rng.random() < 0.5:
        p.add(["the", "statistics", "office", rng.choice(SAID)])
    detail(rng, p)
    p.copy("good").head("prices", "good").head("rise" if up else "fall", "verb").copy("num").copy("pct")
    p.align[1] = p.at["good"][0] - 2        # "prices" from "price" of "the price of"
    return p, f"price|{good}|{month}"


def resign(rng):
    (first, last), org, role = rng.choice(PEOPLE), rng.choice(COMPANIES), rng.choice(ROLES)
    p = Pair("resign")
    p.add(first, "first").add(last, "last")
    p.add(rng.choice(SAID))
    if rng.random() < 0.5:
        p.add(when(rng))
    p.add("that").add("she" if first in SHE else "he").add("will", "will").add("step down", "step").add("as", "as")
    p.add(role, "role").add("of").add(org, "org")
    if rng.random() < 0.5:
        p.add(["in", rng.choice(MONTHS)])
    detail(rng, p)
    p.copy("first").copy("last").head("to", "will").copy("step").copy("as").copy("role").head("of", "org")
    p.align[-1] = p.at["org"][0] - 1
    p.copy("org")
    return p, f"resign|{last}|{org}"


def election(rng):
    city, (first, last) = rng.choice(CITIES), rng.choice(PEOPLE)
    p = Pair("election")
    p.add("voters in").add(city, "city").add("elected", "verb").add(first, "first").add(last, "last")
    p.add("as their new").add("mayor", "mayor")
    if rng.random() < 0.6:
        p.add(when(rng))
    if rng.random() < 0.4:
        p.add(["ending", rng.choice(NUMBERS[:10]), "years", "of", "the", "old", "council"])
    detail(rng, p)
    p.copy("city").head("elects", "verb").copy("first").copy("last").head("as", "mayor").copy("mayor")
    p.align[-2] = p.at["mayor"][0] - 3      # "as" of "as their new mayor"
    return p, f"election|{last}|{city}"


EVENTS = [opening, plan, arrest, match, weather, price, resign, election]


def render(words):
    """The sentence as text: capitalised, names capitalised, a full stop; split_words gives the words back."""
    names = set(CITIES + COMPANIES + TEAMS + DAYS + MONTHS + [w for pair in PEOPLE for w in pair])
    text = " ".join(w.capitalize() if w in names else w for w in words)
    return text[0].upper() + text[1:] + "."


def is_heldout(key):
    return zlib.crc32(key.encode()) % 10 == 0


def sample(rng, heldout):
    while True:
        p, key = rng.choice(EVENTS)(rng)
        if is_heldout(key) == heldout:
            break
    text = render(p.words)
    source = [w for w in split_words(text)[0] if w not in (".", "!", "?")]
    assert source == p.words, (source, p.words)
    return {"text": text, "source": source, "headline": p.headline, "align": p.align, "kind": p.kind}


def training_stream(seed):
    rng = random.Random(seed)
    while True:
        yield sample(rng, False)


def heldout_set(n, seed):
    rng = random.Random(seed)
    return [sample(rng, True) for _ in range(n)]


VALIDATION = dict(n=1000, seed=1001)
TEST = dict(n=2000, seed=2002)
MAX_SOURCE_LENGTH = 40   # words; the longest sentence is checked below
MAX_TARGET_LENGTH = 14   # headline words + </s>


def vocabularies():
    """Every source and headline word the generator can write, sorted (with the special entries first)."""
    rng = random.Random(7)
    src, tgt = set(), set()
    for _ in range(20000):
        for heldout in (False, True):
            ex = sample(rng, heldout)
            src.update(ex["source"])
            tgt.update(ex["headline"])
    return ["<pad>", "<unk>"] + sorted(src), ["<pad>", "<s>", "</s>"] + sorted(tgt)


def check(n):
    rng = random.Random(5)
    lengths, heads = [], []
    seen_train, seen_test = set(), set()
    for i in range(n):
        ex = sample(rng, i % 2 == 1)
        assert len(ex["headline"]) == len(ex["align"]) and ex["headline"]
        for word, j in zip(ex["headline"], ex["align"]):
            assert 0 <= j < len(ex["source"]), (ex, word, j)
            src = ex["source"][j]
            # Copied, or said another way: the pairs the generator makes.
            ok = word == src or (word, src) in {("opens", "opened"), ("to", "will"), ("arrest", "arrested"),
                                                ("beat", "defeated"), ("closes", "closed"), ("prices", "price"),
                                                ("rise", "rose"), ("fall", "fell"), ("elects", "elected"),
                                                ("police", "police"), ("new", "new"), ("in", "in"),
                                                ("after", "after"), ("of", "of"), ("as", "as")}
            assert ok, (ex["text"], ex["headline"], word, src)
        lengths.append(len(ex["source"]))
        heads.append(len(ex["headline"]))
        (seen_test if i % 2 else seen_train).add(" ".join(ex["source"]))
    assert max(lengths) <= MAX_SOURCE_LENGTH, max(lengths)
    assert max(heads) + 1 <= MAX_TARGET_LENGTH, max(heads)
    assert not (seen_train & seen_test)
    print(f"{n} pairs: source {min(lengths)}-{max(lengths)} words (mean {sum(lengths) / n:.1f}), headline "
          f"{min(heads)}-{max(heads)} words; every headline word aligned to a source word; no sentence in both "
          f"splits")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check", type=int, nargs="?", const=20000)
    args = ap.parse_args()
    if args.check:
        check(args.check)
    rng = random.Random(args.seed)
    for _ in range(args.show):
        ex = sample(rng, False)
        print(ex["text"])
        print("  -> " + " ".join(f"{w}<{ex['source'][j]}>" if w != ex["source"][j] else w
                                  for w, j in zip(ex["headline"], ex["align"])))


if __name__ == "__main__":
    main()
