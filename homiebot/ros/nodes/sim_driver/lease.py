"""The robot's body lease as spot_wrapper handles it (``SpotWrapper.claim`` / ``release``, ``SpotLeash``): ``claim``
acquires the lease politely, so it is refused while another client (the operator's tablet) holds it; claiming
again what the driver holds already is a success that says so; ``release`` returns it."""

from __future__ import annotations

# bosdyn.client.lease.ResourceAlreadyClaimedError, as SpotWrapper.claim answers it (str(err): class and docstring)
ALREADY_CLAIMED = "ResourceAlreadyClaimedError: Use TakeLease method to forcefully grab the already claimed lease."
DRIVER = "ros_spot"  # the driver's lease client name (spot_wrapper's SPOT_CLIENT_NAME)


class SimLease:
    """Who holds the body lease: nobody (``None``), the driver (``DRIVER``) or another client by name."""

    def __init__(self, holder: str | None = None) -> None:
        self.holder = holder

    def claim(self) -> tuple[bool, str]:
        """The driver's ``claim``: acquire the lease unless another client holds it."""
        if self.holder == DRIVER:
            return True, "We already claimed the lease"
        if self.holder is not None:
            return False, f"{ALREADY_CLAIMED} (held by '{self.holder}')"
        self.holder = DRIVER
        return True, "Success"

    def release(self) -> tuple[bool, str]:
        """The driver's ``release``: return the lease (a lease it does not hold stays with its holder)."""
        if self.holder == DRIVER:
            self.holder = None
        return True, "Success"

    def lost(self) -> None:
        """The driver went away: its lease lapses (nobody keeps it alive)."""
        if self.holder == DRIVER:
            self.holder = None


def lease_holder(value: object) -> str | None:
    """The node parameter ``lease_held_by``: empty for a free lease, else the name of the client holding it."""
    text = str(value).strip()
    return text or None


__all__ = ["ALREADY_CLAIMED", "DRIVER", "SimLease", "lease_holder"]
