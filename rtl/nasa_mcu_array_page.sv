// The MAC array as nasa_mcu's unit (parameter Array): its MMIO page (hw_spec.h NASA_MCU_MAP,
// PageArray: words AIn..ARun, fields AG* and AR*) and nasa_mac_array behind it. The core writes
// the page's words; the write of ARun starts the layer (the array's start_i the cycle after,
// busy_o from then), and the unit owns the memory port until busy_o falls (nasa_mcu stalls the
// core's page and memory accesses meanwhile). The page holds what the board's layers need: the
// input's address as a row (the board's tensors are 8-aligned), a 12-bit row length, the clamp
// as the activations give it (low end -128 or 0). The weights', output's and records' words load
// the array's own counters (ldw_i, ldo_i, ldp_i), which advance during a run: the firmware
// writes all the words before every ARun (one register each, not two). err_o (the ARun read):
// bit 0 (ArFault) a write the memory did not take, bit 1 (ArBadRec) a record's shift outside
// [1, MaxShift] (the layer stopped at its block), each latched until the next start. The
// constraints nasa_mac_array lists are the firmware's to check (fpga/fw/fw.c arr_conv()).
module nasa_mcu_array_page #(
  parameter bit          Primitive = 1'b1,  // as nasa_mac_array's
  parameter int unsigned AddrBits  = 17
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                we_i,      // a page write (not while busy_o)
  input  logic [2:0]          reg_i,     // its word
  input  logic [31:0]         wdata_i,
  output logic [31:0]         err_o,
  output logic                busy_o,
  output logic                req_valid_o,
  input  logic                req_ready_i,
  output logic                req_we_o,
  output logic [AddrBits-1:0] req_addr_o,
  output logic [63:0]         req_wdata_o,
  output logic [7:0]          req_wstrb_o,
  input  logic                rsp_valid_i,
  input  logic [63:0]         rsp_rdata_i
);
  logic [AddrBits-1:3] in_q;  // (rows)
  logic [15:0] pix_q;
  logic [11:0] rowb_q;
  logic [8:0] cin_q, cout_q;
  logic [7:0] hi_q, ih_q, iw_q, ow_q;
  logic start_q, err, bad, neg_q, dw_q, st_q, s2_q, ad_q;
  logic [2:0] k_q;
  logic [1:0] padt_q;
  always_ff @(posedge clk_i) begin
    start_q <= 1'b0;
    if (we_i) begin
      unique case (reg_i)
        3'(nasa_pkg::McuAIn):   in_q <= wdata_i[AddrBits-1:3];
        3'(nasa_pkg::McuAWgt), 3'(nasa_pkg::McuAOut), 3'(nasa_pkg::McuAPrm): ;  // (the array's)
        3'(nasa_pkg::McuAPix):  pix_q <= wdata_i[15:0];
        3'(nasa_pkg::McuAGeom): begin
          ow_q <= wdata_i[nasa_pkg::McuAgOw+:8];
          iw_q <= wdata_i[nasa_pkg::McuAgIw+:8];
          ih_q <= wdata_i[nasa_pkg::McuAgIh+:8];
          padt_q <= wdata_i[nasa_pkg::McuAgPadt+:2];
          s2_q <= wdata_i[nasa_pkg::McuAgS2];
          k_q <= wdata_i[nasa_pkg::McuAgK+:3];
          st_q <= wdata_i[nasa_pkg::McuAgSt];
          dw_q <= wdata_i[nasa_pkg::McuAgDw];
        end
        3'(nasa_pkg::McuARowB): rowb_q <= wdata_i[11:0];
        default: begin  // ARun
          cin_q <= wdata_i[nasa_pkg::McuArCin+:9];
          cout_q <= wdata_i[nasa_pkg::McuArCout+:9];
          neg_q <= wdata_i[nasa_pkg::McuArNeg];
          hi_q <= wdata_i[nasa_pkg::McuArHi+:8];
          ad_q <= wdata_i[nasa_pkg::McuArAdd];
          start_q <= 1'b1;
        end
      endcase
    end
  end
  logic arr_busy;
  assign busy_o = start_q || arr_busy;  // (from the cycle after the ARun write)
  logic ldw, ldo, ldp;  // AWgt, AOut, APrm: the array's counters load them
  assign ldw = we_i && reg_i == 3'(nasa_pkg::McuAWgt);
  assign ldo = we_i && reg_i == 3'(nasa_pkg::McuAOut);
  assign ldp = we_i && reg_i == 3'(nasa_pkg::McuAPrm);
  assign err_o = {30'd0, bad, err};
  nasa_mac_array #(.Primitive(Primitive), .AddrBits(AddrBits)) u_array (
    .clk_i, .rst_ni, .start_i(start_q), .in_i({in_q, 3'b000}),
    .wgt_i({wdata_i[AddrBits-1:3], 3'b000}), .out_i(wdata_i[AddrBits-1:0]),
    .prm_i({wdata_i[AddrBits-1:3], 3'b000}), .ldw_i(ldw), .ldo_i(ldo), .ldp_i(ldp), .pix_i(pix_q),
    .cin_i(cin_q), .cout_i(cout_q),
    .dw_i(dw_q), .st_i(st_q), .ad_i(ad_q), .ih_i(ih_q), .iw_i(iw_q), .ow_i(ow_q), .k_i(k_q),
    .s2_i(s2_q), .padt_i(padt_q), .rowb_i({4'd0, rowb_q}), .lo_i({neg_q, 7'd0}), .hi_i(hi_q),
    .busy_o(arr_busy), .err_o(err), .bad_o(bad), .req_valid_o, .req_ready_i, .req_we_o, .req_addr_o,
    .req_wdata_o, .req_wstrb_o, .rsp_valid_i, .rsp_rdata_i
  );
endmodule
