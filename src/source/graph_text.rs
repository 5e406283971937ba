//! `superstep graph`'s text: one layout for every graph source. A source says what its graph
//! is (title, a line about it, state keys with their reducers, nodes with where they lead and
//! their marks); this writes it the same way for a spec and a Python graph.

/// A graph described for `superstep graph` (not the Mermaid text, which each source draws as
/// LangGraph's `draw_mermaid` does).
#[derive(Debug, Default)]
pub struct GraphText {
    /// `NAME  (where it came from)`.
    pub title: String,
    /// Lines under the title (a spec's description, the Python interpreter).
    pub about: Vec<String>,
    /// `(key, how it is updated)`.
    pub state: Vec<(String, String)>,
    pub nodes: Vec<NodeText>,
}

#[derive(Debug, Default)]
pub struct NodeText {
    pub name: String,
    /// Where it leads; empty: the graph ends after it.
    pub edges: Vec<String>,
    /// `break-before`, `subgraph`, …
    pub marks: Vec<String>,
}

impl std::fmt::Display for GraphText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "graph {}", self.title)?;
        for line in &self.about {
            writeln!(f, "  {line}")?;
        }
        writeln!(f, "state:")?;
        for (key, update) in &self.state {
            writeln!(f, "  {key:<16} {update}")?;
        }
        writeln!(f, "nodes:")?;
        for n in &self.nodes {
            let edges = if n.edges.is_empty() {
                "(end)".to_string()
            } else {
                n.edges.join(", ")
            };
            let marks = if n.marks.is_empty() {
                String::new()
            } else {
                format!("   [{}]", n.marks.join(", "))
            };
            writeln!(f, "  {:<16} -> {edges}{marks}", n.name)?;
        }
        Ok(())
    }
}
