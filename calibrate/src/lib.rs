//! calibrate fits the parameters an emulated fabric's model card marks as assumptions ([A]) so
//! that the fabric's emulated results match a measured or published table (OSU text, or a CSV
//! of suite, size and value), within the ranges the card allows. It runs the emulated fabric
//! in process through the runner for every trial, minimises the relative error with argmin,
//! reports the error per point and how well each fitted value is determined, and writes a card
//! `--model` takes.
