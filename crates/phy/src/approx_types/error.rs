//! The one error type of the approximate data types.

/// Bad input to a mask, a layout or a transmission.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ApproxTypeError {
    /// A data type name that is not one of [`super::DType::ALL`].
    #[error("dtype '{name}' is not an approximate data type (expected one of float16, bfloat16, float32, float64, complex64, complex128, int8..int64, uint8..uint64)")]
    UnknownDType {
        /// The name given.
        name: String,
    },
    /// A protection level above the word's width.
    #[error("level {level} is above the {bits} bits of a {dtype} word")]
    Level {
        /// The level given.
        level: u32,
        /// Bits per word of the data type.
        bits: u32,
        /// The data type's name.
        dtype: &'static str,
    },
    /// A buffer whose length is not a whole number of elements.
    #[error("buffer of {len} bytes is not a whole number of {element} byte {dtype} elements")]
    Length {
        /// The buffer's length in bytes.
        len: usize,
        /// Bytes per element.
        element: usize,
        /// The data type's name.
        dtype: &'static str,
    },
    /// An output buffer of the wrong size.
    #[error("output buffer has {got} bytes, expected {expected}")]
    OutputLength {
        /// What the output must hold.
        expected: usize,
        /// What it holds.
        got: usize,
    },
    /// A bit error rate outside [0, 1] or NaN.
    #[error("{field} must be a bit error rate in [0, 1], got {value}")]
    Ber {
        /// Which argument.
        field: &'static str,
        /// The value given.
        value: f64,
    },
}
