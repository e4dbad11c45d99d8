"""A synthetic personal assistant: facts, preferences, knowledge gaps, a near duplicate and a move."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sleepcompact.demo.synthetic.transcript import (
    SyntheticConversation,
    _Call,
    _interleave,
    _Transcript,
)

MIN_ASSISTANT_TURNS = 19
"""Fewest turns ``personal_assistant`` accepts: every fact, question and contradiction once."""


# -- personal assistant -------------------------------------------------------------------------------

_ASSISTANT_SYSTEM = (
    "You are a friendly personal assistant. Remember what the user says; be honest about gaps."
)


@dataclass(frozen=True)
class _Person:
    """The random draws of one user: who they are, where they live and travel, what they booked."""

    name: str
    old_city: str
    new_city: str
    dep: str
    dest: str
    flight: str
    dep_time: str
    date: str
    allergen: str
    adjective: str
    sister: str
    birthday: str
    booking: str
    hotel: str
    job: str
    seat: str
    km: int
    temp: int
    wind: int
    rain: int


def _draw_person(rng: random.Random) -> _Person:
    name = rng.choice(["Alice", "Priya", "Jonas", "Mei", "Tomás", "Ingrid", "Kwame"])
    old_city, new_city = rng.sample(["Berlin", "Hamburg", "Cologne", "Leipzig", "Bremen", "Dresden"], 2)
    dep = rng.choice(["Munich", "Frankfurt", "Vienna", "Zurich"])
    dest = rng.choice(["Lisbon", "Oslo", "Madrid", "Dublin", "Athens"])
    flight = f"{rng.choice(['LH', 'LX', 'OS', 'EW'])} {rng.randint(100, 999)}"
    dep_time = f"{rng.randint(5, 21):02d}:{rng.choice([0, 10, 25, 40, 55]):02d}"
    date = f"{rng.choice(['March', 'April', 'May', 'June'])} {rng.randint(1, 28)}"
    pairs = [
        ("peanuts", "peanut"),
        ("shellfish", "shellfish"),
        ("sesame", "sesame"),
        ("tree nuts", "tree nut"),
    ]
    allergen, adjective = rng.choice(pairs)
    sister = rng.choice(["Clara", "Noor", "Hana", "Elif"])
    birthday = f"{rng.choice(['July', 'October'])} {rng.randint(1, 28)}"
    booking = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
    hotel = rng.choice(["Hotel Aurora", "Casa Lumen", "Harbour Inn", "Pension Mira"])
    job = rng.choice(["a nurse", "a data engineer", "a teacher", "an architect"])
    seat = rng.choice(["window", "aisle"])
    km, temp, wind = rng.randint(900, 3200), rng.randint(8, 27), rng.randint(5, 30)
    rain = rng.randint(0, 9)
    return _Person(
        name,
        old_city,
        new_city,
        dep,
        dest,
        flight,
        dep_time,
        date,
        allergen,
        adjective,
        sister,
        birthday,
        booking,
        hotel,
        job,
        seat,
        km,
        temp,
        wind,
        rain,
    )


def _facts(p: _Person) -> dict[str, str]:
    """What the user states, by role: the facts the memory tests look for."""
    return {
        "units": f"{p.name} prefers metric units",
        "home": f"I live in {p.old_city}",
        "job": f"I work as {p.job}",
        "allergy": f"I'm allergic to {p.allergen}",
        "flight": f"my flight {p.flight} leaves {p.dep} at {p.dep_time} on {p.date}",
        "booking": f"my booking reference at {p.hotel} is {p.booking}",
        "seat": f"I always prefer a {p.seat} seat",
        "sister": f"my sister {p.sister}'s birthday is {p.birthday}",
        "dup": f"I have a {p.adjective} allergy",
        "move": f"I moved from {p.old_city} to {p.new_city}",
    }


def _core(p: _Person, f: dict[str, str], ask_weather: str) -> list[tuple[str, str]]:
    """The conversation's turns: every fact, the questions it cannot answer, the near duplicate, the move."""
    return [
        (
            f"Hi! I'm {p.name}. Please remember: {f['units']}.",
            f"Nice to meet you, {p.name}! I'll use metric units.",
        ),
        (
            f"Some background: {f['home']} and {f['job']}.",
            f"Got it: you live in {p.old_city} and work as {p.job}.",
        ),
        (f"Important: {f['allergy']}.", f"Noted, I'll flag anything containing {p.allergen}."),
        (
            f"Next week I travel: {f['flight']}, going to {p.dest}.",
            f"Saved: {p.flight} from {p.dep} at {p.dep_time}.",
        ),
        (
            "What's the gate for my flight?",
            f"I don't know the gate for {p.flight} yet; check the app that day.",
        ),
        (f"And {f['booking']}.", f"Stored {p.booking} for {p.hotel}."),
        (f"How far is {p.dest} from {p.dep}?", f"Roughly {p.km} km as the crow flies."),
        (ask_weather, f"In {p.dest}: {p.temp} °C and wind {p.wind} km/h. Pack a light jacket."),
        (f"By the way, {f['seat']}.", f"Understood, a {p.seat} seat whenever I help with bookings."),
        (
            "What's the Wi-Fi password at my hotel?",
            f"I don't have it; ask {p.hotel} reception, ref {p.booking}.",
        ),
        (
            f"Suggest a snack for flight {p.flight}.",
            f"Dried mango; it has no {p.allergen}, but check the label.",
        ),
        (f"Also, {f['sister']}.", f"I'll remind you before {p.birthday}."),
        (f"Do you know {p.sister}'s phone number?", "I don't; you haven't told me and I can't look it up."),
        (f"Just so you know, {f['dup']}.", f"Yes, you're allergic to {p.allergen}; I'll keep avoiding it."),
        (f"Big news: {f['move']} last month.", f"Congratulations! Your home city is now {p.new_city}."),
        ("Which train goes from my new home to the airport?", f"I don't have {p.new_city} timetables yet."),
        (
            f"Draft a birthday message for {p.sister}.",
            f"Happy birthday, {p.sister}! Have a great year. {p.name}",
        ),
        ("Thanks, that's all for now.", f"You're welcome, {p.name}. Have a good trip on {p.flight}!"),
    ]


def _fillers(rng: random.Random, p: _Person, count: int) -> list[tuple[str, str]]:
    """Small talk that makes the conversation the requested length (drawn after the core)."""
    fillers = [
        ("When does my flight leave again?", f"{p.flight} leaves {p.dep} at {p.dep_time} on {p.date}."),
        ("What was my booking reference?", f"Your reference at {p.hotel} is {p.booking}."),
        ("Convert {n} miles for me.", "That's about {km} km."),
        ("Any airport food I should avoid?", f"Anything with {p.allergen}; ask staff about ingredients."),
        ("How many kilograms is {n} pounds?", "About {kg} kg."),
        (
            "Book me a seat for the flight, please.",
            f"I can't book directly; pick a {p.seat} seat on {p.flight}.",
        ),
    ]
    rng.shuffle(fillers)
    extra: list[tuple[str, str]] = []
    for k in range(count):
        question, answer = fillers[k % len(fillers)]
        n = rng.randint(2, 400)
        extra.append((question.format(n=n), answer.format(km=f"{n * 1.609:.1f}", kg=f"{n * 0.4536:.1f}")))
    return extra


def personal_assistant(seed: int = 0, turns: int = 30) -> SyntheticConversation:
    """A user chats with an assistant: facts, preferences, knowledge gaps, a near duplicate and a move.

    ``turns`` is the number of user messages (one of them a tool result); there are ``2 * turns`` messages.
    """
    if turns < MIN_ASSISTANT_TURNS:
        raise ValueError(f"turns must be at least {MIN_ASSISTANT_TURNS}, got {turns}")
    rng = random.Random(seed)
    p = _draw_person(rng)
    f = _facts(p)
    forecast = f"{p.dest}, {p.date}: {p.temp} °C, wind {p.wind} km/h, rain {p.rain} mm"
    weather = _Call("get_weather", {"city": p.dest, "date": p.date, "units": "metric"}, forecast)
    ask_weather = f"What will the weather be like in {p.dest} on {p.date}?"
    core = _core(p, f, ask_weather)
    # The weather turn adds a tool-result user message, hence the one fewer filler.
    _interleave(rng, core, _fillers(rng, p, turns - len(core) - 1), 6, len(core) - 1)
    t = _Transcript(seed)
    for question, answer in core:
        t.user(question)
        if question == ask_weather:
            t.assistant("Let me check the forecast.", [weather])
        t.assistant(answer)
    order = ("units", "home", "job", "allergy", "flight", "booking", "seat", "sister", "dup", "move")
    identifiers = [p.flight, p.booking, p.hotel, p.dest, p.sister]
    return SyntheticConversation(
        "personal-assistant",
        _ASSISTANT_SYSTEM,
        t.messages,
        [f[k] for k in order],
        identifiers,
        [(f["home"], f["move"])],
    )
