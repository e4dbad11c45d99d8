"""The rewriter's word lists, one entry at a time: what a memory says when a sentence uses that word.

``test_perspective.py`` pins whole sentences; this file pins the entries of the tables behind them, so
that dropping or misspelling one changes a memory a user would read: "I'd gone" is a past ("had
gone"), not a wish ("would gone"); an adverb between the subject and its verb does not take the
verb's agreement ("Emily fully agrees", not "Emily fullies agree"); a contraction the rewriter does
not know is kept as written; a curly apostrophe reads as a straight one.
"""

from __future__ import annotations

import pytest

from sleepcompact.domain.perspective import Speakers, third_person

EMILY = Speakers("Emily", "the assistant", speaker_is_user=True)


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        ("I'd gone home.", "Emily had gone home."),
        ("I'd done it before.", "Emily had done it before."),
        ("I'd seen it twice.", "Emily had seen it twice."),
        ("I'd had lunch.", "Emily had had lunch."),
        ("I'd never tried it.", "Emily had never tried it."),
        ("I'd already left.", "Emily had already left."),
        ("I'd just arrived.", "Emily had just arrived."),
        ("I'd finished the book.", "Emily had finished the book."),
        # Not a past participle: a wish or a conditional.
        ("I'd love to go.", "Emily would love to go."),
        ("I'd go with you.", "Emily would go with the assistant."),
        ("I'd rather stay.", "Emily would rather stay."),
        ("I'd need more time.", "Emily would need more time."),  # -ed, but present
    ],
)
def test_i_d_is_had_before_a_past_participle_and_would_otherwise(said: str, remembered: str) -> None:
    assert third_person(said, EMILY) == remembered


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        ("I know I'd.", "Emily knows Emily would."),
        ("Yes, I'd!", "Yes, Emily would!"),
        ("If asked, we'd.", "If asked, Emily and others would."),
    ],
)
def test_i_d_with_no_word_after_it_is_would(said: str, remembered: str) -> None:
    assert third_person(said, EMILY) == remembered


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        ("I also like tea.", "Emily also likes tea."),  # listed, and not ending in -ly
        ("I happily agree.", "Emily happily agrees."),  # not listed: an -ly word of seven letters
        ("I fully agree.", "Emily fully agrees."),  # an -ly word of five letters
        ("I gladly accept.", "Emily gladly accepts."),
        ("I idly scroll my feed.", "Emily idly scrolls Emily's feed."),  # four letters, the shortest
        # -ly verbs are verbs: they agree.
        ("I rely on you.", "Emily relies on the assistant."),
        ("I apply for jobs.", "Emily applies for jobs."),
        ("I fly often.", "Emily flies often."),
    ],
)
def test_an_adverb_before_the_verb_passes_the_agreement_on_to_the_verb(said: str, remembered: str) -> None:
    assert third_person(said, EMILY) == remembered


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        # A curly apostrophe is read as a straight one (the replacement is written straight).
        ("I don’t eat meat.", "Emily doesn't eat meat."),
        ("I haven’t decided.", "Emily hasn't decided."),
        # A contraction no table knows is kept as written, in either apostrophe.
        ("I needn't worry.", "Emily needn't worry."),
        ("I mightn’t come.", "Emily mightn’t come."),
    ],
)
def test_a_contracted_verb_after_a_subject(said: str, remembered: str) -> None:
    assert third_person(said, EMILY) == remembered


@pytest.mark.parametrize(
    ("speaker", "remembered"),
    [
        ("James", "James's dog is old."),
        ("Emily", "Emily's dog is old."),
        # A name given in a possessive form is not given a second apostrophe.
        ("the Harris'", "The Harris' dog is old."),
    ],
)
def test_the_possessive_of_the_speakers_name(speaker: str, remembered: str) -> None:
    assert third_person("My dog is old.", Speakers(speaker, "the assistant")) == remembered


ASSISTANT = Speakers("the assistant", "Emily", speaker_is_user=False)


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        ("I recommend Dune", "The assistant recommended Dune to Emily"),
        ("I suggest plan X", "The assistant suggested plan X to Emily"),
        ("I recommend Dune!", "The assistant recommended Dune to Emily!"),
        ("I recommend Dune?", "The assistant recommended Dune to Emily?"),
    ],
)
def test_whom_a_recommendation_was_for_goes_before_the_final_punctuation_if_any(
    said: str, remembered: str
) -> None:
    assert third_person(said, ASSISTANT) == remembered


@pytest.mark.parametrize(
    ("said", "who", "remembered"),
    [
        ("I need help.", EMILY, "Emily needs help."),
        ("I feed my cat.", EMILY, "Emily feeds Emily's cat."),
        ("You need rest.", ASSISTANT, "Emily needs rest."),
        ("I finished it.", EMILY, "Emily finished it."),
        ("I agreed.", EMILY, "Emily agreed."),
    ],
)
def test_a_present_verb_ending_in_ed_agrees_and_a_past_one_is_kept(
    said: str, who: Speakers, remembered: str
) -> None:
    assert third_person(said, who) == remembered


@pytest.mark.parametrize(
    ("said", "who", "remembered"),
    [
        ("We're moving to Lyon.", EMILY, "Emily and others are moving to Lyon."),
        ("We've met before.", EMILY, "Emily and others have met before."),
        ("We'll call you.", EMILY, "Emily and others will call the assistant."),
        ("We'd love that.", EMILY, "Emily and others would love that."),
        ("Come with us.", EMILY, "Come with Emily and others."),
        ("The car is ours.", EMILY, "The car is Emily's."),
        ("We did it ourselves.", EMILY, "Emily and others did it themselves."),
        ("You're kind.", EMILY, "The assistant is kind."),
        ("You’re kind.", EMILY, "The assistant is kind."),
        ("I’m tired.", EMILY, "Emily is tired."),
        ("You've helped a lot.", EMILY, "The assistant has helped a lot."),
        ("You'll see.", EMILY, "The assistant will see."),
        ("You'd like it.", EMILY, "The assistant would like it."),
        ("Is this yours?", EMILY, "Is this the assistant's?"),
        ("Ask yourself.", EMILY, "Ask themself."),
        ("Help yourselves.", EMILY, "Help themselves."),
        # The assistant's "we" is the assistant and the user.
        ("Our chat was fun.", ASSISTANT, "Their chat was fun."),
        ("The idea is ours.", ASSISTANT, "The idea is theirs."),
        ("We did it ourselves.", ASSISTANT, "The assistant and Emily did it themselves."),
    ],
)
def test_each_pronoun_and_contraction_the_rewriter_knows(said: str, who: Speakers, remembered: str) -> None:
    assert third_person(said, who) == remembered


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        # A verb opening a sentence has no subject to agree with.
        ("Have a nice day.", "Have a nice day."),
        # "you" as an object: the verbs after it are not its.
        ("I told you to do it.", "Emily told the assistant to do it."),
        # After punctuation, or a line or tab break, "you" starts a clause: its verb agrees.
        ("Well, you like it.", "Well, the assistant likes it."),
        ("Right\nyou like it.", "Right\nthe assistant likes it."),
        ("Right\tyou like it.", "Right\tthe assistant likes it."),
    ],
)
def test_where_you_is_a_subject_and_where_an_object(said: str, remembered: str) -> None:
    assert third_person(said, EMILY) == remembered


@pytest.mark.parametrize(
    ("said", "remembered"),
    [
        ("I sent the notes you and Sam asked for.", "Emily sent the notes the assistant and Sam asked for."),
        ("I sent `a.md` you and Sam asked for.", "Emily sent `a.md` the assistant and Sam asked for."),
        ('I read "Dune" you and Sam liked.', 'Emily read "Dune" the assistant and Sam liked.'),
    ],
)
def test_a_title_or_a_file_name_before_you_is_read_like_any_other_word(said: str, remembered: str) -> None:
    # The word after "you" is not made to agree with it ("the assistant ands Sam").
    assert third_person(said, EMILY) == remembered
