"""A synthetic companion chat over many days: facts said once, early, then weeks of small talk.

The shape of the long two-person conversations a memory layer is for: the user tells the companion
things on the first days (a booking code, a sister's birthday, a pet's name, a book, an allergy, a
new job, a trip), never repeats them, and chats about unrelated things for weeks. At the end each
planted fact has a question whose answer is only in those first days, so a policy that keeps the
recent turns (truncation) cannot answer it, and one that kept what mattered can. Every message is
dated with its day (``sent_at``), as a chat app would store it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

_NAMES = ("Dana", "Malik", "Sofia", "Henrik", "Aiko", "Teodor", "Leila", "Rafael")
_SISTERS = ("Noor", "Clara", "Ines", "Mirela", "Yuki", "Astrid")
_PETS = ("Biscuit", "Pixel", "Marmalade", "Juniper", "Tofu", "Ziggy")
_PET_KINDS = ("tabby cat", "beagle", "grey parrot", "rabbit")
_BOOKS = ("The Left Hand of Darkness", "Piranesi", "The Remains of the Day", "Stoner", "Kindred")
_ALLERGENS = ("sesame", "shellfish", "kiwi", "penicillin")
_JOBS = ("pediatric nurse", "bridge engineer", "sous-chef", "court interpreter")
_CITIES = ("Porto", "Ljubljana", "Tallinn", "Valencia", "Kraków")
_TOPICS = (
    ("The weather turned grey again today, so I stayed in with a pot of tea.", "Grey days are good for tea."),
    (
        "I tried a new running route along the river this morning.",
        "River routes are lovely; how did it feel?",
    ),
    ("Work was slow today, mostly emails and a long meeting.", "Slow days have their place too."),
    ("I rearranged the living room furniture over the weekend.", "A new layout can make a room feel fresh."),
    ("I watched a documentary about deep-sea creatures last night.", "The deep sea is full of strange life."),
    ("My neighbour's garden is full of sunflowers right now.", "Sunflowers always look cheerful."),
    ("I baked bread for the first time in months.", "Fresh bread is hard to beat."),
    (
        "The bus was late again, I read on my phone while waiting.",
        "Waiting is easier with something to read.",
    ),
    ("I cleaned out my inbox, down to eleven emails.", "That must feel tidy."),
    ("I listened to an old jazz record while cooking dinner.", "Jazz and cooking go well together."),
    ("It rained all afternoon and I finally fixed the squeaky door.", "A quiet fix on a rainy day."),
    ("I went to the market and bought way too many tomatoes.", "Tomato sauce season, then."),
)


@dataclass(frozen=True)
class CompanionChat:
    """The messages (each dated with ``sent_at``) and the questions about what was planted early."""

    name: str
    messages: list[dict[str, Any]]
    qa: list[tuple[str, list[list[str]]]]


def companion_chat(seed: int = 0, days: int = 40, turns_per_day: int = 6) -> CompanionChat:
    """A user and a companion chatting over ``days`` days; the facts come on the first three."""
    rng = random.Random(seed)
    name, sister, pet, pet_kind = (
        rng.choice(_NAMES),
        rng.choice(_SISTERS),
        rng.choice(_PETS),
        rng.choice(_PET_KINDS),
    )
    book, allergen, job, city = (
        rng.choice(_BOOKS),
        rng.choice(_ALLERGENS),
        rng.choice(_JOBS),
        rng.choice(_CITIES),
    )
    code = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
    birthday = f"{rng.choice(['March', 'July', 'October'])} {rng.randint(2, 27)}"
    start = date(2025, 3, 1) + timedelta(days=rng.randint(0, 60))
    planted = [
        (
            f"Hi, I'm {name}. I just adopted a {pet_kind} called {pet}!",
            f"Welcome, {name}! {pet} is a great name.",
        ),
        (
            f"My sister {sister}'s birthday is on {birthday}, remind me to plan something.",
            "I'll keep that in mind.",
        ),
        (f'I\'m reading "{book}" for my book club this month.', "That's a wonderful choice for a book club."),
        (
            f"Heads up: I'm allergic to {allergen}, so no recipes with it please.",
            f"Understood, no {allergen}.",
        ),
        (f"Big news, I got the job as a {job}!", "Congratulations, that's huge!"),
        (
            f"I booked a trip to {city} in the autumn, confirmation code {code}.",
            f"{city} in autumn sounds lovely.",
        ),
    ]
    messages: list[dict[str, Any]] = []
    for day in range(days):
        when = (start + timedelta(days=day)).isoformat()
        today = planted[day * 2 : day * 2 + 2] if day < 3 else []
        chat = today + [rng.choice(_TOPICS) for _ in range(turns_per_day - len(today))]
        for said, reply in chat:
            messages.append({"role": "user", "content": said, "sent_at": when})
            messages.append({"role": "assistant", "content": reply, "sent_at": when})
    qa = [
        ("What's the name of the pet I adopted?", [[pet]]),
        ("When is my sister's birthday?", [[birthday]]),
        ("Which book was I reading for my book club?", [[book]]),
        ("What am I allergic to?", [[allergen]]),
        ("What job did I get?", [[job]]),
        ("What was the confirmation code for my autumn trip?", [[code]]),
    ]
    return CompanionChat(f"companion-{seed}", messages, qa)
