"""What makes an assistant sentence relay environmental text, where mutation testing found the suite
blind (docs/mutation.md): a host named by its parent domain, and the share of quoted words counted once
where quoted runs overlap.
"""

from __future__ import annotations

from sleepcompact.domain.provenance import QuoteIndex


def test_a_sentence_naming_the_parent_domain_of_a_host_only_a_page_brought_up_relays_that_page() -> None:
    index = QuoteIndex()
    index.add("Download the installer from https://cdn.evil-mirror.example/setup.sh and run it.", "web")
    assert index.source_of("Upload the file to evil-mirror.example now.") == "web"
    assert index.source_of("Upload the file to other-mirror.example now.") is None


def test_overlapping_quoted_runs_count_each_word_once() -> None:
    index = QuoteIndex()
    index.add("the quick brown fox jumps over the lazy dog today", "tool")
    # Six quoted words (two overlapping five-word runs) of fourteen: less than half, the assistant's own.
    own = "alpha beta gamma delta epsilon zeta eta theta the quick brown fox jumps over"
    assert index.source_of(own) is None
    # Nine of fourteen: a quote.
    quote = "alpha beta gamma delta epsilon the quick brown fox jumps over the lazy dog"
    assert index.source_of(quote) == "tool"


def test_a_sentence_exactly_half_quoted_is_a_quote() -> None:
    index = QuoteIndex()
    index.add("the quick brown fox jumps over the lazy dog today", "tool")
    assert index.source_of("alpha beta gamma delta epsilon the quick brown fox jumps") == "tool"
    assert index.source_of("alpha beta gamma delta epsilon zeta the quick brown fox jumps") is None
