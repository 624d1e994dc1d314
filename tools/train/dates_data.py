#!/usr/bin/python3
"""Synthetic dates for the date-normalisation seq2seq models (made on the fly; no data files).

    /usr/bin/python3 tools/train/dates_data.py [--show N] [--seed S]     prints N examples with their spans
    /usr/bin/python3 tools/train/dates_data.py --check [N]               self-test (spans, one reading, split)

Every example is a dict:
    text    the source, printable ASCII (characters 32..126), e.g. "Sat 21 Nov 26"
    target  "YYYY-MM-DD", e.g. "2026-11-21"
    spans   {"day": [start, end), "month": [start, end), "year": [start, end)}: the source characters of the
            field (digits of the day without an ordinal suffix, the month's number or name without a dot,
            the year's 2 or 4 digits). A weekday is never a field.
    format  the format's name (below); date: the datetime.date

Formats (day-first whenever the year is last, year-month-day whenever the year is first; numeric
formats never put the month first, so "03/04/26" is always 3 April 2026; a month first is always a
name, "Nov 3, 2026"):

    iso            2026-11-21            ymd_dot        2026.11.21           ymd_slash   2026/11/21
    ymd_compact    20261121              ymd_name       2026 Nov 21
    dmy_slash      21/11/2026 (1/3/2026) dmy_slash_yy   21/11/26 (1/3/26)    dmy_dash    21-11-2026
    dmy_dot        21.11.2026 (1.3.2026) dmy_dot_yy     21.11.26
    d_mon_y        21 Nov 2026           d_mon_y_dash   21-Nov-2026          d_month_y   21 November 2026
    dth_month_y    21st November 2026    wd_d_month_y   Saturday, 21 November 2026
    month_d_y      November 21, 2026     mon_dth_y      Nov 21st 2026        wdy_mon_d_y Sat, Nov 21, 2026
    the_dth_of     the 21st of November, 2026
    wdy_d_mon_yy   Sat 21 Nov 26         mon_d_yy       Nov 21 '26

Decorations that do not change the reading: day and month numbers zero-padded or not where the format
shows both; a correct weekday in front ("Saturday, " / "Sat " / "Sat, ") for formats that have none
(probability 0.15); letter case natural (as above), lower, UPPER or Title (each word capitalised,
"21st" stays "21st"); formats with month names use the natural case half of the time.

Years: 4-digit formats cover 1900-01-01 .. 2099-12-31. Two-digit years use the pivot 50:
YY 00..49 -> 20YY, YY 50..99 -> 19YY, so 2-digit formats are drawn from 1950-01-01 .. 2049-12-31.

Split: the key "<YYYY-MM-DD>|<format>" is held out when crc32(key) % 10 == 0 (10 % of all date-format
pairs). Training examples never come from a held-out key (whatever the decoration), evaluation examples
always do, so a (date, format) pair is never both trained on and evaluated.
"""

import argparse
import datetime as dt
import random
import re
import zlib

SOURCE_VOCAB = ["<pad>", "<unk>"] + [chr(c) for c in range(32, 127)]
TARGET_VOCAB = ["<pad>", "<s>", "</s>"] + list("0123456789") + ["-"]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
MONS = [m[:3] for m in MONTHS]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
WDYS = [w[:3] for w in WEEKDAYS]

PIVOT = 50
FOUR_DIGIT_RANGE = (dt.date(1900, 1, 1), dt.date(2099, 12, 31))
TWO_DIGIT_RANGE = (dt.date(1950, 1, 1), dt.date(2049, 12, 31))

# Field tokens: {D} day (padded or not, per example), {DD} day padded, {Do} ordinal day ("21st", span the
# digits), {M} month number (padded or not), {MM} padded, {Mon} "Nov", {Month} "November", {YYYY}, {YY},
# {Wd} "Saturday", {Wdy} "Sat" (weekdays are not fields).
FORMATS = [
    ("iso", "{YYYY}-{MM}-{DD}"),
    ("ymd_dot", "{YYYY}.{MM}.{DD}"),
    ("ymd_slash", "{YYYY}/{MM}/{DD}"),
    ("ymd_compact", "{YYYY}{MM}{DD}"),
    ("ymd_name", "{YYYY} {Mon} {DD}"),
    ("dmy_slash", "{D}/{M}/{YYYY}"),
    ("dmy_slash_yy", "{D}/{M}/{YY}"),
    ("dmy_dash", "{DD}-{MM}-{YYYY}"),
    ("dmy_dot", "{D}.{M}.{YYYY}"),
    ("dmy_dot_yy", "{DD}.{MM}.{YY}"),
    ("d_mon_y", "{D} {Mon} {YYYY}"),
    ("d_mon_y_dash", "{DD}-{Mon}-{YYYY}"),
    ("d_month_y", "{D} {Month} {YYYY}"),
    ("dth_month_y", "{Do} {Month} {YYYY}"),
    ("wd_d_month_y", "{Wd}, {D} {Month} {YYYY}"),
    ("month_d_y", "{Month} {D}, {YYYY}"),
    ("mon_dth_y", "{Mon} {Do} {YYYY}"),
    ("wdy_mon_d_y", "{Wdy}, {Mon} {D}, {YYYY}"),
    ("the_dth_of", "the {Do} of {Month}, {YYYY}"),
    ("wdy_d_mon_yy", "{Wdy} {D} {Mon} {YY}"),
    ("mon_d_yy", "{Mon} {D} '{YY}"),
]
FORMAT_NAMES = [n for n, _ in FORMATS]
_TOKEN = re.compile(r"\{(\w+)\}")


def two_digit(template):
    return "{YY}" in template


def ordinal(n):
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def is_heldout(date, fmt):
    return zlib.crc32(f"{date.isoformat()}|{fmt}".encode()) % 10 == 0


def _case(text, style):
    if style == "lower":
        return text.lower()
    if style == "upper":
        return text.upper()
    if style == "title":
        return re.sub(r"[A-Za-z]+", lambda m: m.group(0)[0].upper() + m.group(0)[1:].lower()
                      if m.start() == 0 or not text[m.start() - 1].isdigit() else m.group(0).lower(), text)
    return text


def render(date, fmt, rng, plain=False):
    """One example of `date` in format `fmt` with random decorations drawn from rng (a random.Random);
    plain=True: no padding, no weekday, natural case (rng unused)."""
    template = dict(FORMATS)[fmt]
    pad = not plain and rng.random() < 0.5
    prefix = ""
    if "{Wd" not in template and not plain and rng.random() < 0.15:
        wd = date.weekday()
        prefix = rng.choice([WEEKDAYS[wd] + ", ", WDYS[wd] + " ", WDYS[wd] + ", "])
    out, spans, pos = [prefix], {}, len(prefix)
    last = 0
    for m in _TOKEN.finditer(template):
        lit = template[last:m.start()]
        out.append(lit)
        pos += len(lit)
        tok = m.group(1)
        field, piece, span_len = None, None, None
        if tok in ("D", "DD"):
            field, piece = "day", (f"{date.day:02d}" if tok == "DD" or pad else str(date.day))
        elif tok == "Do":
            field, piece, span_len = "day", ordinal(date.day), len(str(date.day))
        elif tok in ("M", "MM"):
            field, piece = "month", (f"{date.month:02d}" if tok == "MM" or pad else str(date.month))
        elif tok == "Mon":
            field, piece = "month", MONS[date.month - 1]
        elif tok == "Month":
            field, piece = "month", MONTHS[date.month - 1]
        elif tok == "YYYY":
            field, piece = "year", f"{date.year:04d}"
        elif tok == "YY":
            field, piece = "year", f"{date.year % 100:02d}"
        elif tok == "Wd":
            piece = WEEKDAYS[date.weekday()]
        elif tok == "Wdy":
            piece = WDYS[date.weekday()]
        else:
            raise ValueError(tok)
        if field:
            spans[field] = [pos, pos + (span_len if span_len is not None else len(piece))]
        out.append(piece)
        pos += len(piece)
        last = m.end()
    out.append(template[last:])
    text = "".join(out)
    if re.search(r"[A-Za-z]", text) and not plain:
        style = "natural" if rng.random() < 0.5 else rng.choice(["lower", "upper", "title"])
        text = _case(text, style)
    return {"text": text, "target": date.isoformat(), "spans": spans, "format": fmt, "date": date}


def random_date(rng, two_digit_year):
    lo, hi = TWO_DIGIT_RANGE if two_digit_year else FOUR_DIGIT_RANGE
    return lo + dt.timedelta(days=rng.randrange((hi - lo).days + 1))


def sample(rng, heldout):
    """One example whose (date, format) key is held out (heldout=True) or not."""
    while True:
        fmt, template = FORMATS[rng.randrange(len(FORMATS))]
        date = random_date(rng, two_digit(template))
        if is_heldout(date, fmt) == heldout:
            return render(date, fmt, rng)


def training_stream(seed):
    rng = random.Random(seed)
    while True:
        yield sample(rng, heldout=False)


def heldout_set(n, seed):
    rng = random.Random(seed)
    return [sample(rng, heldout=True) for _ in range(n)]


# Fixed evaluation sets (all from held-out keys): the training script stops on VALIDATION, the report
# measures on TEST (a different sample of the held-out pairs).
VALIDATION = dict(n=2000, seed=1001)
TEST = dict(n=2000, seed=2002)
MAX_SOURCE_LENGTH = 40     # the longest rendering is 38 characters ("Wednesday, the 23rd of September, 2026")
MAX_TARGET_LENGTH = 12     # "YYYY-MM-DD" is 10 characters, + </s>


# ---------------------------------------------------------------- self-test: one reading per string

def _format_regex(template):
    parts, last = [r"(?:(?:%s),? )?" % "|".join(WEEKDAYS + WDYS)], 0
    groups = {"D": r"(?P<day>\d{1,2})", "DD": r"(?P<day>\d{2})", "Do": r"(?P<day>\d{1,2})(?:st|nd|rd|th)",
              "M": r"(?P<month>\d{1,2})", "MM": r"(?P<month>\d{2})", "Mon": r"(?P<mon>%s)" % "|".join(MONS),
              "Month": r"(?P<mon>%s)" % "|".join(MONTHS), "YYYY": r"(?P<year>\d{4})", "YY": r"(?P<yy>\d{2})",
              "Wd": "(?:%s)" % "|".join(WEEKDAYS), "Wdy": "(?:%s)" % "|".join(WDYS)}
    for m in _TOKEN.finditer(template):
        parts.append(re.escape(template[last:m.start()]))
        parts.append(groups[m.group(1)])
        last = m.end()
    parts.append(re.escape(template[last:]))
    return re.compile("^" + "".join(parts) + "$", re.IGNORECASE)


_REGEXES = [(n, _format_regex(t)) for n, t in FORMATS]


def readings(text):
    """Every (format, date) reading of text under all formats (the decorations included)."""
    out = set()
    for name, rx in _REGEXES:
        m = rx.match(text)
        if not m:
            continue
        g = m.groupdict()
        month = int(g["month"]) if g.get("month") else [x.lower() for x in MONS].index(g["mon"][:3].lower()) + 1
        year = int(g["year"]) if g.get("year") else (2000 + int(g["yy"]) if int(g["yy"]) < PIVOT else 1900 + int(g["yy"]))
        try:
            out.add((name, dt.date(year, month, int(g["day"]))))
        except ValueError:
            pass
    return out


def check(n):
    rng = random.Random(7)
    seen = {f: 0 for f in FORMAT_NAMES}
    longest = ""
    for i in range(n):
        ex = sample(rng, heldout=bool(i % 2))
        t, sp, d = ex["text"], ex["spans"], ex["date"]
        assert all(32 <= ord(c) <= 126 for c in t), t
        assert ex["target"] == f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
        assert int(t[sp["day"][0]:sp["day"][1]]) == d.day, (t, sp)
        mtxt = t[sp["month"][0]:sp["month"][1]]
        assert (int(mtxt) if mtxt.isdigit() else [m.lower() for m in MONS].index(mtxt[:3].lower()) + 1) == d.month
        ytxt = t[sp["year"][0]:sp["year"][1]]
        assert int(ytxt) == d.year or (len(ytxt) == 2 and int(ytxt) == d.year % 100), (t, sp)
        dates = {date for _, date in readings(t)}
        assert dates == {d}, (t, readings(t))
        assert is_heldout(d, ex["format"]) == bool(i % 2)
        seen[ex["format"]] += 1
        longest = max(longest, t, key=len)
    worst = max((render(dt.date(2026, 9, 23), f, random.Random(0)) for f in FORMAT_NAMES), key=lambda e: len(e["text"]))
    assert len(longest) <= MAX_SOURCE_LENGTH and len("Wednesday, " + worst["text"]) <= MAX_SOURCE_LENGTH
    print(f"{n} examples ok; {len(FORMATS)} formats, counts {min(seen.values())}..{max(seen.values())}; "
          f"longest seen {len(longest)} characters: {longest!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", type=int, nargs="?", const=20000, default=None)
    args = ap.parse_args()
    if args.check is not None:
        check(args.check)
    rng = random.Random(args.seed)
    for _ in range(args.show):
        ex = sample(rng, heldout=False)
        marks = "".join("D" if ex["spans"]["day"][0] <= i < ex["spans"]["day"][1] else
                        "M" if ex["spans"]["month"][0] <= i < ex["spans"]["month"][1] else
                        "Y" if ex["spans"]["year"][0] <= i < ex["spans"]["year"][1] else "."
                        for i in range(len(ex["text"])))
        print(f"{ex['format']:14s} {ex['text']:40s} {ex['target']}\n{'':14s} {marks}")


if __name__ == "__main__":
    main()
