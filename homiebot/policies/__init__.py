"""Low-level policies (the ``homiebot.policies`` plugins): NoMaD, PixNav, Octo, RT-1-X wrappers, scripted and
simulator-expert policies, and the ``Policy`` interface they share. Skills (``homiebot.skills``) run them."""
