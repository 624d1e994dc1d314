#!/usr/bin/python3
"""Templated multi-sentence reviews whose deciding words and deciding sentences are known.

Used by train_sentiment.py (the two bundled sentiment classifiers) and make_classifier_fixtures.py.

A review has 2 to 6 sentences about one item (a film, a restaurant, a product, a hotel, a book or a
game): neutral filler sentences (plot, location, price, when and with whom, ...; none holds a lexicon
word) and one or two *deciding* sentences, each with one sentiment phrase:

    [intensifier] SENTIMENT-WORD           "the acting was truly superb."   "i loved the ending."
    NEGATOR [intensifier] SENTIMENT-WORD   "the food was not good."         "it was never boring."

Label rule (simple on purpose): a phrase's polarity is its lexicon word's (POSITIVE or NEGATIVE),
flipped when a negator (not, never, hardly, wasn't, isn't) precedes it. All phrases of one review have
the same polarity, and that is the label (0 negative, 1 positive). Labels are balanced.

Deciding words: the sentiment word and, when present, its negator (intensifiers are not deciding
words). Deciding sentences: the sentences that hold them. Indices are token indices as MODELS.md
section 2 splits the text (lower-cased, [a-z0-9']+ or one of . ! ?, which end a sentence): see
split_words(), which classifier_torch.py uses too.

Split: make_splits(n_train, n_test) draws the training set from seed 1 and the held-out set from seed 2,
dropping every held-out review whose text occurs in the training set (exact text), so the two are
disjoint.

    /usr/bin/python3 tools/train/reviews_data.py [n]     # prints n sample reviews with their annotations
"""

import random
import re
import sys

# ---------------------------------------------------------------- the words section 2 sees

_TOKEN = re.compile(rb"[a-z0-9']+|[.!?]")


def split_words(text):
    """MODELS.md section 2: tokens, byte spans [begin, end) in text's UTF-8, sentence index of each token.

    Lower-casing is ASCII only (bytes.lower()): a non-ASCII letter is never a word character, so it
    separates tokens whatever its case."""
    data = text.encode("utf-8").lower()
    tokens, spans, sentence = [], [], []
    s = 0
    for m in _TOKEN.finditer(data):
        tokens.append(m.group().decode("ascii"))
        spans.append((m.start(), m.end()))
        sentence.append(s)
        if m.group() in (b".", b"!", b"?"):
            s += 1
    return tokens, spans, sentence


# ---------------------------------------------------------------- lexicons

POSITIVE = ["good", "great", "excellent", "wonderful", "superb", "brilliant", "fantastic", "delightful",
            "amazing", "outstanding", "lovely", "charming", "impressive", "perfect", "memorable", "enjoyable",
            "terrific", "marvellous", "splendid", "pleasant"]
NEGATIVE = ["bad", "awful", "terrible", "dreadful", "boring", "dull", "disappointing", "poor", "mediocre",
            "horrible", "weak", "bland", "tedious", "clumsy", "forgettable", "annoying", "unpleasant",
            "lousy", "dismal", "atrocious"]
POSITIVE_VERBS = ["loved", "enjoyed", "adored", "liked"]
NEGATIVE_VERBS = ["hated", "disliked", "loathed", "detested"]
INTENSIFIERS = ["very", "really", "truly", "absolutely", "quite", "incredibly", "extremely", "so", "rather",
                "genuinely"]
NEGATORS = ["not", "never", "hardly"]          # "the x was not good"
NEGATED_COPULAS = ["wasn't", "isn't"]          # "the x wasn't good" (the negator is one token)

# ---------------------------------------------------------------- domains

DOMAINS = {
    "film": {
        "item": ["the film", "the movie", "this film", "this movie", "the picture"],
        "aspect": ["the acting", "the plot", "the soundtrack", "the ending", "the dialogue", "the script",
                   "the cinematography", "the cast", "the pacing", "the lead actress", "the villain",
                   "the music", "the story"],
        "filler": [
            "I watched {item} on a {day} {time} with my {person}.",
            "{Item} runs for about {num} minutes.",
            "The plot follows a family moving to a small town.",
            "It was directed by a woman from {city}.",
            "We saw it at the cinema near the station.",
            "The story is set in {city} during the winter.",
            "{Item} is based on a novel from the {decade}.",
            "My {person} picked the tickets.",
            "There is a long scene on a train.",
            "Most of the cast are newcomers.",
            "It opened in {num} theatres last {month}.",
            "The trailer came out in {month}.",
            "Have you seen the trailer?",
            "The lead actor also wrote the script.",
            "We had popcorn and two sodas.",
        ],
    },
    "restaurant": {
        "item": ["the restaurant", "the place", "this restaurant", "the bistro", "the diner"],
        "aspect": ["the food", "the service", "the pasta", "the soup", "the dessert", "the staff",
                   "the atmosphere", "the wine list", "the steak", "the waiter", "the curry", "the pizza",
                   "the bread"],
        "filler": [
            "We went there on a {day} {time} with my {person}.",
            "{Item} is located near the station in {city}.",
            "We ordered the soup and two mains.",
            "The menu changes every {month}.",
            "We paid {num} euros for two people.",
            "It has about {num} tables and a small terrace.",
            "I booked a table for {num} people.",
            "The kitchen is open until ten.",
            "My {person} had the fish.",
            "They opened a second place in {city} last {month}.",
            "Parking is on the street behind the building.",
            "Do they take reservations?",
            "The waiter brought the bill at nine.",
            "We sat by the window.",
            "It used to be a bakery in the {decade}.",
        ],
    },
    "product": {
        "item": ["the speaker", "this blender", "the laptop", "the kettle", "this vacuum", "the camera",
                 "the phone", "this printer", "the chair", "the backpack"],
        "aspect": ["the battery", "the build quality", "the design", "the sound", "the screen",
                   "the packaging", "the manual", "the price", "the motor", "the lid", "the strap",
                   "the software", "the cable"],
        "filler": [
            "I bought {item} last {month} from an online shop.",
            "It arrived on a {day} {time} in a brown box.",
            "{Item} comes in black and grey.",
            "It weighs about {num} grams.",
            "I paid {num} dollars for it.",
            "My {person} uses it every day.",
            "It came with a cable and a small bag.",
            "The box says it was made in {city}.",
            "I have had it for {num} weeks now.",
            "The warranty lasts two years.",
            "Does it work with older models?",
            "I replaced an old one from the {decade}.",
            "It charges through a usb port.",
            "The manual has {num} pages.",
            "I use it mostly in the kitchen.",
        ],
    },
    "hotel": {
        "item": ["the hotel", "this hotel", "the hostel", "the inn", "the resort"],
        "aspect": ["the room", "the breakfast", "the staff", "the bed", "the view", "the pool",
                   "the location", "the shower", "the reception", "the bathroom", "the wifi"],
        "filler": [
            "We stayed {num} nights in {month} with my {person}.",
            "{Item} is a short walk from the station in {city}.",
            "Our room was on the third floor.",
            "We checked in on a {day} {time}.",
            "It has {num} rooms and a bar.",
            "The building dates from the {decade}.",
            "We paid {num} euros a night.",
            "Breakfast is served from seven to ten.",
            "Is there a car park?",
            "My {person} booked it through an agency.",
            "The lift goes up to the fifth floor.",
            "We came for a wedding in {city}.",
            "Check out is at noon.",
        ],
    },
    "book": {
        "item": ["the book", "this novel", "the novel", "this memoir", "the collection"],
        "aspect": ["the writing", "the plot", "the main character", "the ending", "the prose", "the dialogue",
                   "the translation", "the narrator", "the first chapter", "the cover"],
        "filler": [
            "I read {item} on the train to {city}.",
            "{Item} has {num} chapters.",
            "It was first published in the {decade}.",
            "The author grew up in {city}.",
            "My {person} lent me a copy in {month}.",
            "I finished it on a {day} {time}.",
            "The story follows two sisters and their father.",
            "It is the second book in a series.",
            "Is there a sequel?",
            "I read the paperback edition.",
            "It runs to about {num} pages.",
            "Our reading group chose it for {month}.",
        ],
    },
    "game": {
        "item": ["the game", "this game", "the sequel", "this puzzle game"],
        "aspect": ["the control scheme", "the art style", "the story", "the level design", "the soundtrack",
                   "the multiplayer", "the final boss", "the puzzle design", "the camera", "the map"],
        "filler": [
            "I played {item} on a {day} {time} with my {person}.",
            "{Item} came out last {month}.",
            "It takes about {num} hours to finish.",
            "The studio is based in {city}.",
            "I played it on the old console.",
            "There are {num} levels and a bonus stage.",
            "It costs {num} dollars.",
            "The first game came out in the {decade}.",
            "Can you play it offline?",
            "My {person} finished it first.",
            "You play as a young pilot.",
            "It has a co op mode.",
        ],
    },
}

SLOTS = {
    "day": ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
    "time": ["morning", "afternoon", "evening", "night"],
    "person": ["sister", "brother", "mother", "father", "friend", "partner", "wife", "husband", "colleague",
               "neighbour", "son", "daughter"],
    "city": ["paris", "london", "berlin", "madrid", "tokyo", "boston", "lisbon", "oslo", "rome", "dublin",
             "chicago", "vienna"],
    "num": ["2", "3", "4", "5", "6", "8", "10", "12", "15", "20", "25", "30", "40", "90", "120", "200"],
    "month": ["january", "february", "march", "april", "may", "june", "july", "august", "september",
              "october", "november", "december"],
    "decade": ["1960s", "1970s", "1980s", "1990s"],
}

# Deciding sentences. {adj} / {verb} is the sentiment phrase; {neg} marks where a negation goes.
ADJ_TEMPLATES = [
    "{Aspect} was {adj}.",
    "{Aspect} is {adj}.",
    "{Aspect} felt {adj}.",
    "Honestly, {aspect} was {adj}.",
    "I thought {aspect} was {adj}.",
    "Overall, {item} was {adj}.",
    "{Item} is {adj}.",
    "All in all, {item} was {adj}.",
    "In the end {item} was {adj}.",
    "To be fair, {aspect} was {adj}!",
    "My {person} said {aspect} was {adj}.",
    "I have to say {aspect} was {adj}.",
]
VERB_TEMPLATES = [
    "I {verb} {aspect}.",
    "I {verb} {item}.",
    "We {verb} {aspect}.",
    "My {person} {verb} {aspect}.",
    "I {verb} {aspect} from the start.",
]


def _cap(s):
    return s[:1].upper() + s[1:]


class _Builder:
    """Pieces of text, some marked deciding; the character ranges of the deciding ones."""

    def __init__(self):
        self.text = ""
        self.marks = []

    def add(self, s, deciding=False):
        if deciding:
            self.marks.append((len(self.text), len(self.text) + len(s)))
        self.text += s


def _fill(template, rng, domain, builder, phrase=None):
    """Writes template into builder; slots are filled at random; {adj}/{verb} is phrase (a list of
    (text, deciding) pieces). The first letter of the sentence is upper case."""
    d = DOMAINS[domain]
    parts = re.split(r"(\{[A-Za-z]+\})", template)
    first = True
    for part in parts:
        if not part:
            continue
        if part.startswith("{"):
            key = part[1:-1]
            if key in ("adj", "verb"):
                for i, (s, dec) in enumerate(phrase):
                    builder.add(_cap(s) if first and i == 0 else s, dec)
            else:
                low = key.lower()
                pool = d[low] if low in d else SLOTS[low]
                s = rng.choice(pool)
                builder.add(_cap(s) if (first or key[0].isupper()) else s)
        else:
            builder.add(_cap(part) if first else part)
        first = False


def _phrase(rng, polarity, kind):
    """Pieces (text, deciding) of one sentiment phrase of the given polarity (+1/-1).

    kind "adj": [negator] [intensifier] adjective; kind "verb": [intensifier] verb (no negation)."""
    pieces = []
    if kind == "verb":
        if rng.random() < 0.3:
            pieces.append((rng.choice(["really ", "truly ", "absolutely ", "genuinely "]), False))
        pieces.append((rng.choice(POSITIVE_VERBS if polarity > 0 else NEGATIVE_VERBS), True))
        return pieces
    negate = rng.random() < 0.2
    word_polarity = -polarity if negate else polarity
    if negate:
        pieces.append((rng.choice(NEGATORS), True))
        pieces.append((" ", False))
    if rng.random() < 0.4 and (not negate or pieces[0][0] == "not"):
        pieces.append((rng.choice(INTENSIFIERS) + " ", False))
    word = rng.choice(POSITIVE if word_polarity > 0 else NEGATIVE)
    if rng.random() < 0.03:
        word = word.upper()
    pieces.append((word, True))
    return pieces


def _negated_copula(template, pieces):
    """'was not good' -> "wasn't good" when the template has 'was {adj}' / 'is {adj}'."""
    if pieces[0][0] == "not" and ("was {adj}" in template or "is {adj}" in template):
        verb = "was" if "was {adj}" in template else "is"
        return template.replace(verb + " {adj}", "{adj}"), [(verb + "n't", True)] + pieces[1:]
    return template, pieces


def make_review(rng, label=None):
    """One review: dict(text, label, deciding_words (token indices), deciding_sentences, domain)."""
    if label is None:
        label = rng.randrange(2)
    polarity = 1 if label == 1 else -1
    domain = rng.choice(sorted(DOMAINS))
    n = rng.randint(2, 6)
    n_deciding = 1 if (n == 2 or rng.random() < 0.6) else 2
    deciding = sorted(rng.sample(range(n), n_deciding))
    fillers = rng.sample(DOMAINS[domain]["filler"], n - n_deciding)
    b = _Builder()
    for i in range(n):
        if i:
            b.add(" ")
        if i in deciding:
            kind = "verb" if rng.random() < 0.25 else "adj"
            template = rng.choice(VERB_TEMPLATES if kind == "verb" else ADJ_TEMPLATES)
            pieces = _phrase(rng, polarity, kind)
            if kind == "adj" and rng.random() < 0.5:
                template, pieces = _negated_copula(template, pieces)
            _fill(template, rng, domain, b, pieces)
        else:
            _fill(fillers.pop(), rng, domain, b)
    tokens, spans, sentence = split_words(b.text)
    # The text is ASCII, so byte offsets are character offsets.
    words = [i for i, (s, e) in enumerate(spans) if any(a <= s and e <= z for a, z in b.marks)]
    sentences = sorted({sentence[i] for i in words})
    assert sentences == deciding, (b.text, sentences, deciding)
    return {"text": b.text, "label": label, "deciding_words": words, "deciding_sentences": sentences,
            "domain": domain}


def make_reviews(n, seed):
    rng = random.Random(seed)
    return [make_review(rng, label=i % 2) for i in range(n)]


def make_splits(n_train, n_test, seed_train=1, seed_test=2):
    train = make_reviews(n_train, seed_train)
    seen = {r["text"] for r in train}
    test = []
    rng = random.Random(seed_test)
    i = 0
    while len(test) < n_test:
        r = make_review(rng, label=i % 2)
        i += 1
        if r["text"] not in seen:
            seen.add(r["text"])
            test.append(r)
    return train, test


def vocabulary():
    """Every token the generator can write, sorted (lower-cased as split_words makes them)."""
    words = set()

    def add(s):
        words.update(split_words(re.sub(r"\{[A-Za-z]+\}", " ", s))[0])

    for d in DOMAINS.values():
        for key in ("item", "aspect", "filler"):
            for s in d[key]:
                add(s)
    for pool in SLOTS.values():
        for s in pool:
            add(s)
    for s in ADJ_TEMPLATES + VERB_TEMPLATES + POSITIVE + NEGATIVE + POSITIVE_VERBS + NEGATIVE_VERBS + \
            INTENSIFIERS + NEGATORS + NEGATED_COPULAS:
        add(s)
    return sorted(words)


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    for r in make_reviews(count, 7):
        toks = split_words(r["text"])[0]
        print(f"[{'pos' if r['label'] else 'neg'}] {r['text']}")
        print(f"    deciding words {[toks[i] for i in r['deciding_words']]} sentences {r['deciding_sentences']}")
    print(f"vocabulary: {len(vocabulary())} words")
