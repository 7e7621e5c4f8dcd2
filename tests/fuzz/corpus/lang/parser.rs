/// Walks a token stream.
pub trait Visit {
    fn visit(&self) -> usize;
}

/// The parser state.
#[derive(Debug)]
pub struct Parser {
    text: String,
}

impl Parser {
    /// Makes a parser over text.
    pub fn new(text: &str) -> Parser {
        Parser { text: text.to_string() }
    }

    pub fn parse(&self) -> usize {
        count(&self.text)
    }
}

impl Visit for Parser {
    fn visit(&self) -> usize {
        self.parse()
    }
}

fn count(s: &str) -> usize {
    s.len()
}
