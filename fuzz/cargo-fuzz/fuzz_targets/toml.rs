//! `cargo +nightly fuzz run toml`: the `toml` target of `aelc-fuzz` under libFuzzer.
#![no_main]

use libfuzzer_sys::fuzz_target;

thread_local! {
    static CHECK: aelc_fuzz::targets::Check =
        aelc_fuzz::targets::check_of("toml").expect("a target of aelc-fuzz");
}

fuzz_target!(|data: &[u8]| {
    CHECK.with(|check| {
        if let Err(why) = check(data) {
            panic!("toml: {why}");
        }
    })
});
