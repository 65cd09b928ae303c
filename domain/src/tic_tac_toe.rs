//! The tic-tac-toe board, as the referee judges it and the bots read it: cells numbered 0–8 row by row.

/// Cells on the board.
pub const CELLS: usize = 9;

/// Every line of three: rows, columns, then the two diagonals.
pub const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];
