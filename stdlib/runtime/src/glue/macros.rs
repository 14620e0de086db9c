//! The glue's repeated code, written once: generated glue calls these macros, one short call
//! per struct and per node, instead of spelling out the same impls and module hundreds of
//! times (issue 42: that was 5.4 MB of an 800-node project's glue, about 4 KB per struct and
//! node). What they expand to is what the compiler wrote before, item for item, so the glue's
//! public API (types, impls, each node's module) is unchanged.
//!
//! Paths the expansion names are the runtime's (`$crate`) or, for the glue's own items
//! (`program()`, `super::executor()`, `super::externs`), the caller's: a macro's paths resolve
//! where it is called, its local variables stay its own (a field called `s` or `fields` does
//! not meet the decoder's).

/// `rt::Glue`, `rt::Decode` and `rt::DecodeFields` for a generated struct, its fields in the
/// program's order, each with its index and, when the Rust name is not the AEL name, the AEL
/// name: `glue_struct! { Item { 0 name, 1 r#type "type" } }`. With `defaults N` (the struct's
/// definition id), also the `TryFrom<serde_json::Value>` its serde `Deserialize` goes through,
/// the runtime decoder filling the defaults in ([`crate::glue::from_json`]).
#[macro_export]
macro_rules! glue_struct {
    ($name:ident { $($i:literal $f:ident $($n:literal)?),* $(,)? } $(defaults $def:literal)?) => {
        impl $crate::glue::Glue for $name {
            fn from_value(
                value: $crate::glue::Value,
            ) -> ::core::result::Result<Self, $crate::glue::Error> {
                $crate::__glue_from_value!($name, value $(, $f $($n)?)*)
            }

            fn to_value(&self) -> $crate::glue::Value {
                $crate::glue::Value::Struct(::std::vec![
                    $($crate::glue::Glue::to_value(&self.$f)),*
                ])
            }
        }

        impl $crate::glue::Decode for $name {
            fn decode(
                s: &mut $crate::glue::Session<'_>,
                ty: &$crate::glue::Ty,
                trail: &$crate::glue::Trail<'_>,
            ) -> $crate::glue::Decoded<Self> {
                s.record(ty, trail)
            }
        }

        $crate::glue_fields! { $name { $($i $f),* } }
        $($crate::__glue_try_from! { $name $def })?
    };
}

/// `rt::DecodeFields` for a struct (or a node's `Input`) with fields `f` at indices `i`: one
/// pass of `Session::read_fields` into a slot per field, then the struct from the slots.
#[macro_export]
macro_rules! glue_fields {
    ($name:ident {}) => {
        impl $crate::glue::DecodeFields for $name {
            fn decode_fields(
                s: &mut $crate::glue::Session<'_>,
                fields: &[$crate::glue::FieldTy],
                tag: ::core::option::Option<&str>,
                trail: &$crate::glue::Trail<'_>,
            ) -> $crate::glue::Decoded<Self> {
                let ok = s.read_fields(fields, tag, trail, |s, _, fill| s.skip(fill))?;
                ::core::result::Result::Ok(ok.then_some($name {}))
            }
        }
    };
    ($name:ident { $($i:literal $f:ident),+ }) => {
        impl $crate::glue::DecodeFields for $name {
            fn decode_fields(
                s: &mut $crate::glue::Session<'_>,
                fields: &[$crate::glue::FieldTy],
                tag: ::core::option::Option<&str>,
                trail: &$crate::glue::Trail<'_>,
            ) -> $crate::glue::Decoded<Self> {
                $(let mut $f = ::core::option::Option::None;)+
                let ok = s.read_fields(fields, tag, trail, |s, i, fill| match i {
                    $($i => s.fill(&mut $f, fill),)+
                    _ => s.skip(fill),
                })?;
                if !ok {
                    return ::core::result::Result::Ok(::core::option::Option::None);
                }
                $(let ::core::option::Option::Some($f) = $f else {
                    return ::core::result::Result::Ok(::core::option::Option::None);
                };)+
                ::core::result::Result::Ok(::core::option::Option::Some($name { $($f),+ }))
            }
        }
    };
}

/// The module of node `node` (index `index` in the program): `INDEX`, `PROMPT_FILE` for a
/// `prompt: file(…)`, `Input` (the one parameter's type, `input "name": T`, or a struct of
/// the parameters, `inputs { 0 a: T, 1 b: U }`), `Output`, `decode`, `from_values`,
/// `to_values`, `run` and `run_json`. The docs before `mod` are the module's.
#[macro_export]
macro_rules! glue_node {
    (
        $(#[$doc:meta])*
        mod $node:ident = $index:literal $(, prompt $prompt:literal)?;
        input $param:literal: $input:ty;
        output $output:ty;
    ) => {
        $(#[$doc])*
        pub mod $node {
            use $crate::glue as rt;

            $crate::__glue_node_index! { $index $(, $prompt)? }

            #[doc = ::core::concat!("The node's input: the value of `", $param, "`.")]
            pub type Input = $input;

            /// The node's output.
            pub type Output = $output;

            /// Decodes the input document with the runtime decoder (spec §4), straight into the
            /// generated types: the errors are the runtime's, pointer, path, code and sentence.
            pub fn decode(
                bytes: &[u8],
            ) -> ::core::result::Result<Input, ::std::vec::Vec<rt::DecodeError>> {
                rt::decode_one(super::executor(), INDEX, bytes)
            }

            /// The input from decoded values, in parameter order.
            pub fn from_values(
                values: ::std::vec::Vec<rt::Value>,
            ) -> ::core::result::Result<Input, rt::Error> {
                let mut values = values.into_iter();
                rt::field(&mut values, $param)
            }

            /// The input as values, in parameter order.
            pub fn to_values(input: &Input) -> ::std::vec::Vec<rt::Value> {
                ::std::vec![rt::Glue::to_value(input)]
            }

            $crate::__glue_node_runs! {}
        }
    };
    (
        $(#[$doc:meta])*
        mod $node:ident = $index:literal $(, prompt $prompt:literal)?;
        inputs { $($i:literal $f:ident $($n:literal)?: $t:ty),* $(,)? }
        output $output:ty;
    ) => {
        $(#[$doc])*
        pub mod $node {
            use $crate::glue as rt;

            $crate::__glue_node_index! { $index $(, $prompt)? }

            /// The node's inputs, one field per parameter.
            #[derive(Clone, Debug, PartialEq)]
            pub struct Input {
                $(pub $f: $t,)*
            }

            $crate::glue_fields! { Input { $($i $f),* } }

            /// The node's output.
            pub type Output = $output;

            /// Decodes the input document with the runtime decoder (spec §4), straight into the
            /// generated types: the errors are the runtime's, pointer, path, code and sentence.
            pub fn decode(
                bytes: &[u8],
            ) -> ::core::result::Result<Input, ::std::vec::Vec<rt::DecodeError>> {
                rt::decode_params(super::executor(), INDEX, bytes)
            }

            /// The input from decoded values, in parameter order.
            pub fn from_values(
                values: ::std::vec::Vec<rt::Value>,
            ) -> ::core::result::Result<Input, rt::Error> {
                $crate::__glue_from_values!(values $(, $f $($n)?)*)
            }

            /// The input as values, in parameter order.
            pub fn to_values(input: &Input) -> ::std::vec::Vec<rt::Value> {
                $crate::__glue_to_values!(input $(, $f)*)
            }

            $crate::__glue_node_runs! {}
        }
    };
}

// ---------------------------------------------------------------- the parts of the above

/// The AEL name of a field: the literal when given, else the Rust name.
#[doc(hidden)]
#[macro_export]
macro_rules! __glue_name {
    ($f:ident) => {
        ::core::stringify!($f)
    };
    ($f:ident $n:literal) => {
        $n
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __glue_from_value {
    ($name:ident, $value:ident) => {
        match $value {
            $crate::glue::Value::Struct(_) => ::core::result::Result::Ok($name {}),
            other => ::core::result::Result::Err($crate::glue::mismatch(
                ::core::concat!("a ", ::core::stringify!($name)),
                &other,
            )),
        }
    };
    ($name:ident, $value:ident $(, $f:ident $($n:literal)?)+) => {
        match $value {
            $crate::glue::Value::Struct(fields) => {
                let mut fields = fields.into_iter();
                ::core::result::Result::Ok($name {
                    $($f: $crate::glue::field(&mut fields, $crate::__glue_name!($f $($n)?))?,)+
                })
            }
            other => ::core::result::Result::Err($crate::glue::mismatch(
                ::core::concat!("a ", ::core::stringify!($name)),
                &other,
            )),
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __glue_try_from {
    ($name:ident $def:literal) => {
        impl ::core::convert::TryFrom<$crate::glue::serde_json::Value> for $name {
            type Error = $crate::glue::DecodeErrors;

            fn try_from(
                json: $crate::glue::serde_json::Value,
            ) -> ::core::result::Result<Self, Self::Error> {
                $crate::glue::from_json(program(), $def, &json)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __glue_node_index {
    ($index:literal) => {
        /// The node's index in [`super::program`].
        pub const INDEX: usize = $index;
    };
    ($index:literal, $prompt:literal) => {
        /// The node's index in [`super::program`].
        pub const INDEX: usize = $index;

        /// `prompt: file(…)`, relative to the project root.
        pub const PROMPT_FILE: &str = $prompt;
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __glue_from_values {
    ($values:ident) => {{
        ::core::mem::drop($values);
        ::core::result::Result::Ok(Input {})
    }};
    ($values:ident $(, $f:ident $($n:literal)?)+) => {{
        let mut values = $values.into_iter();
        ::core::result::Result::Ok(Input {
            $($f: $crate::glue::field(&mut values, $crate::__glue_name!($f $($n)?))?,)+
        })
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __glue_to_values {
    ($input:ident) => {{
        let Input {} = $input;
        ::std::vec::Vec::new()
    }};
    ($input:ident $(, $f:ident)+) => {
        ::std::vec![$($crate::glue::Glue::to_value(&$input.$f)),+]
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __glue_node_runs {
    () => {
        /// Runs the node on a decoded input through the one executor (spec §12), as `aelc run`
        /// does: its input checks, then its body or its model call (the prompt rendered by the
        /// runtime), delegated calls with their own receipts, the output stage and policies.
        /// Externs go to `externs`; the model, clock, media and receipt ids come from `ctx`.
        pub fn run<H: super::externs::All>(
            externs: &mut H,
            ctx: &mut $crate::glue::Context<'_>,
            input: &Input,
        ) -> ::core::result::Result<$crate::glue::Run<Output>, $crate::glue::Unrunnable> {
            let mut host = super::externs::Host(externs);
            $crate::glue::run_values(super::executor(), INDEX, &to_values(input), &mut host, ctx)
        }

        /// Runs the node on an input document as [`run`]; a document that does not decode ends
        /// `rejected_input` with the decoder's errors in `run.input_errors`.
        pub fn run_json<H: super::externs::All>(
            externs: &mut H,
            ctx: &mut $crate::glue::Context<'_>,
            bytes: &[u8],
        ) -> ::core::result::Result<$crate::glue::Run<Output>, $crate::glue::Unrunnable> {
            let mut host = super::externs::Host(externs);
            $crate::glue::run(super::executor(), INDEX, bytes, &mut host, ctx)
        }
    };
}
