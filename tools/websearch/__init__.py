"""Web search backends (Tavily, Serper, OpenAlex) behind one result shape."""
