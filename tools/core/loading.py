"""One lock around building a transformers-backed model, shared by every loader.

While ``from_pretrained`` builds a model, transformers swaps functions on shared classes
(``PreTrainedModel.tie_weights``, torch's init functions) and swaps them back after. Two
loads at once in two threads can restore each other's stand-ins and leave them in place, so
every later model in the process loads untied (an output layer left on the meta device).
Loads are rare and slow: doing them one at a time costs nothing measurable.
"""

from __future__ import annotations

import threading

MODEL_LOADING = threading.RLock()
"""Held while any encoder, cross-encoder or causal LM of the project is built."""
