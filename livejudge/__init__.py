"""livejudge: judge a live conversation with a speech-to-speech voice agent."""
__version__ = "0.1.0"
