//! `cargo +nightly fuzz run parse`: the `parse` target of `aelc-fuzz` under libFuzzer.
#![no_main]

use libfuzzer_sys::fuzz_target;

thread_local! {
    static CHECK: aelc_fuzz::targets::Check =
        aelc_fuzz::targets::check_of("parse").expect("a target of aelc-fuzz");
}

fuzz_target!(|data: &[u8]| {
    CHECK.with(|check| {
        if let Err(why) = check(data) {
            panic!("parse: {why}");
        }
    })
});
