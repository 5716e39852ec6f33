"""Hypothesis profiles for the whole suite: "ci" (the default: hypothesis's usual budget, no
deadline) and "long" (thousands of examples, for the fuzzers: `--hypothesis-profile=long`).
Registered here, in the top conftest, so that hypothesis's own --hypothesis-profile option finds
them when it loads the named profile."""

from hypothesis import settings

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("long", max_examples=3000, deadline=None)
if settings._current_profile == "default":
    settings.load_profile("ci")
