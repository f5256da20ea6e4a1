"""The graphs a LangGraph server serves (``langgraph.json``): each method's graph, policy-checked.

Each is the method's own compiled graph whose settings class is ``served`` (the operator's
policy runs when a run's settings are built), so a client-named host, path, encoder or
collection stops a run before any node, whichever route started it. The CLI and the API
run the graphs of the method modules themselves.
"""

from __future__ import annotations

from factdebate.graphs.registry import served_graph

tool_mad = served_graph("tool-mad")
tool_mad_rag_rag = served_graph("tool-mad-rag-rag")
tool_mad_search_search = served_graph("tool-mad-search-search")
tool_mad_rag_vanilla = served_graph("tool-mad-rag-vanilla")
tool_mad_search_vanilla = served_graph("tool-mad-search-vanilla")
tool_mad_vanilla_vanilla = served_graph("tool-mad-vanilla-vanilla")
tool_mad_no_qf = served_graph("tool-mad-no-qf")
tool_mad_no_stability = served_graph("tool-mad-no-stability")
cot = served_graph("cot")
react = served_graph("react")
mad = served_graph("mad")
madke = served_graph("madke")
mad_fact = served_graph("mad-fact")
single_verifier = served_graph("single-verifier")
debate_cv = served_graph("debate-cv")
rag_cot = served_graph("rag-cot")
majority = served_graph("majority")
cooperation = served_graph("cooperation")
madam_rag = served_graph("madam-rag")
madam_no_rag = served_graph("madam-no-rag")
madam_concat_rag = served_graph("madam-concat-rag")
madam_self_reflect = served_graph("madam-self-reflect")
self_consistency = served_graph("self-consistency")
self_consistency_cot = served_graph("self-consistency-cot")
self_consistency_qa = served_graph("self-consistency-qa")
escalate_tool_mad = served_graph("escalate-tool-mad")
escalate_debate_cv = served_graph("escalate-debate-cv")
escalate_mad_fact = served_graph("escalate-mad-fact")
