"""DebateCV: affirmative and negative debaters, the moderator; RAG-CoT and Majority."""
