"""The embedded home: a simulated house in MuJoCo, its robot (``control.HomeControl``) and everything
that reads simulator truth (expert sources, attempt checks, goal checks). Nothing outside this package
imports it except through the ``homiebot.worlds`` and ``homiebot.policies`` entry points."""
