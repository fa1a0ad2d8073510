//! Projecting a tool's output to the model within a budget. The whole output is always kept
//! (behind a ref, by the executor); the model sees at most `bytes` bytes and `lines` lines.

use serde::{Deserialize, Serialize};

/// The budget of one tool output as the model sees it (defaults: 16 KiB, 400 lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputBudget {
    pub bytes: usize,
    pub lines: usize,
}

impl Default for OutputBudget {
    fn default() -> Self {
        OutputBudget {
            bytes: 16 * 1024,
            lines: 400,
        }
    }
}

/// What the model is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection {
    pub text: String,
    pub spilled: bool,
    pub total_bytes: usize,
    pub total_lines: usize,
}

/// Cuts `output` to the budget at a line and UTF-8 boundary.
pub fn project(output: &str, budget: OutputBudget) -> Projection {
    let total_bytes = output.len();
    let total_lines = output.lines().count();
    if total_bytes <= budget.bytes && total_lines <= budget.lines {
        return Projection {
            text: output.to_owned(),
            spilled: false,
            total_bytes,
            total_lines,
        };
    }
    let mut end = 0;
    for (n, line) in output.split_inclusive('\n').enumerate() {
        if n >= budget.lines || end + line.len() > budget.bytes {
            if n == 0 {
                // One huge first line: cut it at a char boundary.
                let mut cut = budget.bytes.min(line.len());
                while !output.is_char_boundary(cut) {
                    cut -= 1;
                }
                end = cut;
            }
            break;
        }
        end += line.len();
    }
    Projection {
        text: output[..end].to_owned(),
        spilled: true,
        total_bytes,
        total_lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_whole() {
        let p = project("a\nb\n", OutputBudget::default());
        assert!(!p.spilled);
        assert_eq!(p.text, "a\nb\n");
    }

    #[test]
    fn line_budget_cuts_at_lines() {
        let s: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let p = project(&s, OutputBudget::default());
        assert!(p.spilled);
        assert_eq!(p.text.lines().count(), 400);
        assert_eq!(p.total_lines, 1000);
    }

    #[test]
    fn byte_budget_respects_utf8() {
        let s = "é".repeat(20_000);
        let p = project(&s, OutputBudget::default());
        assert!(p.spilled && p.text.len() <= 16 * 1024);
        assert!(p.text.chars().all(|c| c == 'é'));
    }
}
