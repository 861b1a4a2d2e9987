"""The record types of post 002's sensor fixture, on their own: the codec registry names
them (msgpack's ext types), and needs nothing else of the fixtures, whose module
imports every source and reader (about 20 ms, which each of `serkit try`'s timed
processes would pay again)."""

from __future__ import annotations

from typing import NamedTuple


class Vec3(NamedTuple):
    """One 3-axis reading of post 002's IMU."""

    x: float
    y: float
    z: float


class ImuSample(NamedTuple):
    """Post 002's inertial measurement record: three vectors and a timestamp."""

    linear_accel: Vec3
    angular_vel: Vec3
    magnetic_field: Vec3
    timestamp: float
