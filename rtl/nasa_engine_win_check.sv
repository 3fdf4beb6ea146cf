// Whether the byte range [addr, addr + len) lies inside the memory window [base, limit)
// (docs/engine.md "Validation", error Window). The window registers hold values clamped to the
// address space 2^AddrBits, so the check works in AddrBits + 2 bits once addr < 2^AddrBits and
// len <= 2^(AddrBits + 1) are known. Combinational; shared by the descriptor fetch (sequencer)
// and the region checks of decode.
module nasa_engine_win_check #(
  parameter int unsigned AddrBits = 32,
  parameter int unsigned LenW     = 34  // bits of len_i
) (
  input  logic [31:0]     addr_i,
  input  logic [LenW-1:0] len_i,
  input  logic [31:0]     base_i,
  input  logic [31:0]     limit_i,
  output logic            inside_o
);
  localparam int unsigned AW = AddrBits;
  logic [AW:0] base, limit;
  logic [AW+1:0] end_addr;
  assign base     = (AW + 1)'(base_i);
  assign limit    = (AW + 1)'(limit_i);
  assign end_addr = (AW + 2)'(addr_i) + (AW + 2)'(len_i);
  assign inside_o = ((64'(addr_i) >> AW) == '0) && ((64'(len_i) >> (AW + 1)) == '0) &&
                    ((AW + 1)'(addr_i) >= base) && (end_addr <= (AW + 2)'(limit));

  logic unused_window;
  assign unused_window = ^{base_i, limit_i};
endmodule
