//! Agent drivers.
