"""A synthetic personal assistant: facts, preferences, knowledge gaps, a near duplicate and a move."""

from __future__ import annotations

import random

from sleepcompact.synthetic.transcript import (
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


def personal_assistant(seed: int = 0, turns: int = 30) -> SyntheticConversation:
    """A user chats with an assistant: facts, preferences, knowledge gaps, a near duplicate and a move.

    ``turns`` is the number of user messages (one of them a tool result); there are ``2 * turns`` messages.
    """
    if turns < MIN_ASSISTANT_TURNS:
        raise ValueError(f"turns must be at least {MIN_ASSISTANT_TURNS}, got {turns}")
    rng = random.Random(seed)
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

    f_units, f_home, f_job = f"{name} prefers metric units", f"I live in {old_city}", f"I work as {job}"
    f_allergy, f_dup = f"I'm allergic to {allergen}", f"I have a {adjective} allergy"
    f_flight = f"my flight {flight} leaves {dep} at {dep_time} on {date}"
    f_booking = f"my booking reference at {hotel} is {booking}"
    f_sister, f_seat = f"my sister {sister}'s birthday is {birthday}", f"I always prefer a {seat} seat"
    f_move = f"I moved from {old_city} to {new_city}"
    facts = [f_units, f_home, f_job, f_allergy, f_flight, f_booking, f_seat, f_sister, f_dup, f_move]
    forecast = f"{dest}, {date}: {temp} °C, wind {wind} km/h, rain {rng.randint(0, 9)} mm"
    weather = _Call("get_weather", {"city": dest, "date": date, "units": "metric"}, forecast)
    ask_weather = f"What will the weather be like in {dest} on {date}?"
    core: list[tuple[str, str]] = [
        (f"Hi! I'm {name}. Please remember: {f_units}.", f"Nice to meet you, {name}! I'll use metric units."),
        (f"Some background: {f_home} and {f_job}.", f"Got it: you live in {old_city} and work as {job}."),
        (f"Important: {f_allergy}.", f"Noted, I'll flag anything containing {allergen}."),
        (f"Next week I travel: {f_flight}, going to {dest}.", f"Saved: {flight} from {dep} at {dep_time}."),
        (
            "What's the gate for my flight?",
            f"I don't know the gate for {flight} yet; check the app that day.",
        ),
        (f"And {f_booking}.", f"Stored {booking} for {hotel}."),
        (f"How far is {dest} from {dep}?", f"Roughly {km} km as the crow flies."),
        (ask_weather, f"In {dest}: {temp} °C and wind {wind} km/h. Pack a light jacket."),
        (f"By the way, {f_seat}.", f"Understood, a {seat} seat whenever I help with bookings."),
        ("What's the Wi-Fi password at my hotel?", f"I don't have it; ask {hotel} reception, ref {booking}."),
        (f"Suggest a snack for flight {flight}.", f"Dried mango; it has no {allergen}, but check the label."),
        (f"Also, {f_sister}.", f"I'll remind you before {birthday}."),
        (f"Do you know {sister}'s phone number?", "I don't; you haven't told me and I can't look it up."),
        (f"Just so you know, {f_dup}.", f"Yes, you're allergic to {allergen}; I'll keep avoiding it."),
        (f"Big news: {f_move} last month.", f"Congratulations! Your home city is now {new_city}."),
        ("Which train goes from my new home to the airport?", f"I don't have {new_city} timetables yet."),
        (f"Draft a birthday message for {sister}.", f"Happy birthday, {sister}! Have a great year. {name}"),
        ("Thanks, that's all for now.", f"You're welcome, {name}. Have a good trip on {flight}!"),
    ]
    fillers = [
        ("When does my flight leave again?", f"{flight} leaves {dep} at {dep_time} on {date}."),
        ("What was my booking reference?", f"Your reference at {hotel} is {booking}."),
        ("Convert {n} miles for me.", "That's about {km} km."),
        ("Any airport food I should avoid?", f"Anything with {allergen}; ask staff about ingredients."),
        ("How many kilograms is {n} pounds?", "About {kg} kg."),
        ("Book me a seat for the flight, please.", f"I can't book directly; pick a {seat} seat on {flight}."),
    ]
    rng.shuffle(fillers)
    extra: list[tuple[str, str]] = []
    for k in range(turns - len(core) - 1):  # the weather turn adds a tool-result user message
        question, answer = fillers[k % len(fillers)]
        n = rng.randint(2, 400)
        extra.append((question.format(n=n), answer.format(km=f"{n * 1.609:.1f}", kg=f"{n * 0.4536:.1f}")))
    _interleave(rng, core, extra, 6, len(core) - 1)
    t = _Transcript(seed)
    for question, answer in core:
        t.user(question)
        if question == ask_weather:
            t.assistant("Let me check the forecast.", [weather])
        t.assistant(answer)
    identifiers = [flight, booking, hotel, dest, sister]
    return SyntheticConversation(
        "personal-assistant", _ASSISTANT_SYSTEM, t.messages, facts, identifiers, [(f_home, f_move)]
    )
