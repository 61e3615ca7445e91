//! Errors as JavaScript `Error` objects: `name` is `DynasliceError`, `code`
//! the core's stable code, and the message carries the numbers. Violations
//! found by validation travel in `violations`.

use dynaslice_core::Code;
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::JsValue;

/// A failure on its way to JavaScript.
#[derive(Debug)]
pub struct Failure {
    code: Code,
    message: String,
    violations: Option<Array>,
}

impl Failure {
    /// A failure with a code and a message.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            violations: None,
        }
    }

    /// Attaches the violation list (objects with `code`, `path`, `message`).
    pub fn with_violations(mut self, violations: Array) -> Self {
        self.violations = Some(violations);
        self
    }

    /// The stable code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// Names the option that raises the size limit this failure hit, if it
    /// hit one: a limit error should say how to get past it.
    pub fn raised_by(mut self, option: &str) -> Self {
        if matches!(self.code, Code::DecompressLimit | Code::VirtualItemTooLarge) {
            self.message = format!("{} (the option {option} raises it)", self.message);
        }
        self
    }
}

/// A read's failure, naming `maxBytes` when it hit that limit.
pub fn read_failure(e: impl Into<Failure>) -> Failure {
    e.into().raised_by("maxBytes")
}

/// A write's failure, naming `maxRawBytes` when it hit that limit.
pub fn write_failure(e: impl Into<Failure>) -> Failure {
    e.into().raised_by("maxRawBytes")
}

/// Any core error with a `code()` and a message.
macro_rules! core_failures {
    ($($t:ty),*) => {
        $(impl From<$t> for Failure {
            fn from(e: $t) -> Self {
                Self::new(e.code(), e.to_string())
            }
        })*
    };
}
core_failures!(
    dynaslice_core::codec::CodecError,
    dynaslice_core::ReassembleError,
    dynaslice_core::plan::PlanError,
    dynaslice_core::number::NumberError,
    dynaslice_core::layout::ChunkKeyError,
    dynaslice_core::manifest::ManifestError,
    dynaslice_core::encoding::DecodeError,
    dynaslice_core::VersionIdError
);

impl From<dynaslice_core::SplitError> for Failure {
    fn from(e: dynaslice_core::SplitError) -> Self {
        let violations = match &e {
            dynaslice_core::SplitError::Invalid { violations } => {
                Some(crate::convert::violations(violations))
            }
            _ => None,
        };
        let failure = Self::new(e.code(), e.to_string());
        match violations {
            Some(v) => failure.with_violations(v),
            None => failure,
        }
    }
}

impl From<Failure> for JsValue {
    fn from(f: Failure) -> Self {
        let error = js_sys::Error::new(&f.message);
        error.set_name("DynasliceError");
        let object: &Object = error.as_ref();
        let _ = Reflect::set(object, &"code".into(), &f.code.as_str().into());
        if let Some(v) = f.violations {
            let _ = Reflect::set(object, &"violations".into(), &v);
        }
        error.into()
    }
}
