//! The element types a message can carry approximately.

use super::ApproxTypeError;

/// An element type: IEEE floats (half, bfloat16, single, double), complex
/// pairs of floats, and integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits.
    F16,
    /// bfloat16: 1 sign, 8 exponent, 7 fraction bits.
    BF16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// A pair of binary32 (real, imaginary).
    Complex64,
    /// A pair of binary64 (real, imaginary).
    Complex128,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
}

impl DType {
    /// Every data type.
    pub const ALL: [DType; 14] = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::Complex64,
        DType::Complex128,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
    ];

    /// The NumPy name (`bfloat16` for the type NumPy lacks).
    pub fn name(&self) -> &'static str {
        match self {
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
        }
    }

    /// The type named `name` (its NumPy name, or f16 / bf16 / f32 / f64 /
    /// c64 / c128 / i8 ... u64).
    pub fn from_name(name: &str) -> Result<DType, ApproxTypeError> {
        let short = [
            "f16", "bf16", "f32", "f64", "c64", "c128", "i8", "i16", "i32", "i64", "u8", "u16",
            "u32", "u64",
        ];
        DType::ALL
            .iter()
            .zip(short)
            .find(|(d, s)| d.name() == name || *s == name)
            .map(|(d, _)| *d)
            .ok_or_else(|| ApproxTypeError::UnknownDType {
                name: name.to_string(),
            })
    }

    /// Bytes of one scalar word (one part of a complex element).
    pub fn word_bytes(&self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::Complex64 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::Complex128 | DType::I64 | DType::U64 => 8,
        }
    }

    /// Bits of one scalar word: the highest protection level.
    pub fn word_bits(&self) -> u32 {
        8 * self.word_bytes() as u32
    }

    /// Scalar words per element: 2 for complex types, else 1.
    pub fn words_per_element(&self) -> usize {
        match self {
            DType::Complex64 | DType::Complex128 => 2,
            _ => 1,
        }
    }

    /// Bytes per element.
    pub fn element_bytes(&self) -> usize {
        self.word_bytes() * self.words_per_element()
    }

    /// For floats, the sign and exponent bits at the top of each word (the
    /// level below which a bit flip can change a value by orders of
    /// magnitude; 12 for f64, seed 004 §4.2.2); `None` for integers.
    pub fn header_bits(&self) -> Option<u32> {
        match self {
            DType::F16 => Some(6),
            DType::BF16 | DType::F32 | DType::Complex64 => Some(9),
            DType::F64 | DType::Complex128 => Some(12),
            _ => None,
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sizes() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()).unwrap(), d);
        }
        assert_eq!(DType::from_name("bf16").unwrap(), DType::BF16);
        assert_eq!(DType::Complex128.element_bytes(), 16);
        assert_eq!(DType::Complex64.word_bits(), 32);
        assert!(matches!(
            DType::from_name("float128"),
            Err(ApproxTypeError::UnknownDType { .. })
        ));
    }
}
