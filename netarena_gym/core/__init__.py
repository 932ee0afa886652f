"""Shared core of netarena_gym: scenarios, seeding, reward, metrics, shell parsing,
interface helpers, agents and the episode runner. Every task plugs into these."""
