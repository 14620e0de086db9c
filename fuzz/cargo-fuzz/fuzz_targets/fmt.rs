//! `cargo +nightly fuzz run fmt`: the `fmt` target of `aelc-fuzz` under libFuzzer.
#![no_main]

use libfuzzer_sys::fuzz_target;

thread_local! {
    static CHECK: aelc_fuzz::targets::Check =
        aelc_fuzz::targets::check_of("fmt").expect("a target of aelc-fuzz");
}

fuzz_target!(|data: &[u8]| {
    CHECK.with(|check| {
        if let Err(why) = check(data) {
            panic!("fmt: {why}");
        }
    })
});
