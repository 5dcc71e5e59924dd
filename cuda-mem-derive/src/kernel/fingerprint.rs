//! A hash of a kernel's tokens, part of its signature fingerprint: a PTX
//! compiled from other source than the host's is a mismatch even when the
//! parameter types agree.
//!
//! The host and the kernel build run this macro on the same source with two
//! different compilers (stable and the pinned nightly), so the hash reads
//! only what the source fixes: the kind of each token, identifiers, the
//! character of each punctuation mark, the text of literals as written, and
//! group delimiters. Whitespace, comments and the spacing between
//! punctuation marks (which the compiler decides) do not count.

use proc_macro2::{Delimiter, TokenStream, TokenTree};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

struct Fnv(u64);

impl Fnv {
    fn byte(&mut self, byte: u8) {
        self.0 ^= u64::from(byte);
        self.0 = self.0.wrapping_mul(FNV_PRIME);
    }

    /// A length-prefixed string, so that `ab` `c` and `a` `bc` differ.
    fn text(&mut self, text: &str) {
        for byte in (text.len() as u64).to_le_bytes() {
            self.byte(byte);
        }
        for byte in text.bytes() {
            self.byte(byte);
        }
    }

    fn tokens(&mut self, tokens: TokenStream) {
        for token in tokens {
            match token {
                TokenTree::Group(group) => {
                    self.byte(match group.delimiter() {
                        Delimiter::Parenthesis => b'(',
                        Delimiter::Brace => b'{',
                        Delimiter::Bracket => b'[',
                        Delimiter::None => b'~',
                    });
                    self.tokens(group.stream());
                    self.byte(b'.');
                }
                TokenTree::Ident(ident) => {
                    self.byte(b'i');
                    self.text(&ident.to_string());
                }
                TokenTree::Punct(punct) => {
                    self.byte(b'p');
                    let mut buffer = [0u8; 4];
                    self.text(punct.as_char().encode_utf8(&mut buffer));
                }
                TokenTree::Literal(literal) => {
                    self.byte(b'l');
                    self.text(&literal.to_string());
                }
            }
        }
    }
}

/// The FNV-1a hash of `tokens`, read as described in the module docs.
pub(super) fn of_tokens(tokens: TokenStream) -> u64 {
    let mut hash = Fnv(FNV_OFFSET);
    hash.tokens(tokens);
    hash.0
}

#[cfg(test)]
mod tests {
    use super::of_tokens;
    use quote::quote;

    #[test]
    fn layout_and_comments_do_not_count_but_tokens_do() {
        let a: proc_macro2::TokenStream = "fn k ( x : u32 ) { let y = x << 2 ; }".parse().unwrap();
        let b: proc_macro2::TokenStream = "fn k(x: u32) {\n    // shift\n    let y = x<<2;\n}"
            .parse()
            .unwrap();
        assert_eq!(of_tokens(a.clone()), of_tokens(b));
        assert_ne!(
            of_tokens(a),
            of_tokens(quote!(
                fn k(x: u32) {
                    let y = x << 3;
                }
            ))
        );
        assert_ne!(
            of_tokens(quote!(
                fn k(x: u32) {}
            )),
            of_tokens(quote!(
                fn k(x: i32) {}
            ))
        );
        assert_ne!(of_tokens(quote!(ab c)), of_tokens(quote!(a bc)));
        assert_ne!(of_tokens(quote!((a) b)), of_tokens(quote!((a b))));
    }
}
