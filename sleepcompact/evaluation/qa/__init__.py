"""Question-answering dev sets for the evaluation: questions, gold answers and the presence check."""

from sleepcompact.evaluation.qa.memorybank import (
    Evidence,
    GoldAnswer,
    QAItem,
    answer_present,
    load_gold,
    questions,
)

__all__ = ["Evidence", "GoldAnswer", "QAItem", "answer_present", "load_gold", "questions"]
