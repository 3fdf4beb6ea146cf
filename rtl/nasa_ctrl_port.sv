// Control memory master: serves the byte requests of cand_gen, fusion_unit and eval_unit (one
// request at a time) on the engine's memory port while the engine's DMA is idle (port_free_i).
// Reads fetch the whole bus word and keep it: the next byte of the same word is served from it
// (candidate vectors and logits are consecutive bytes). Writes are single-byte strobed bus writes
// and update the cached word. Every address is checked against the window: a violation is
// reported on err_o and the request is dropped (never reaches memory).
module nasa_ctrl_port #(
  parameter int unsigned MemBytes = 32
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  inval_i,      // forget the cached word (memory may have changed)
  input  logic                  port_free_i,  // the engine's DMA is idle and waits
  input  logic [31:0]           win_base_i,
  input  logic [31:0]           win_limit_i,
  output logic                  err_o,        // pulse: a request outside the window
  output logic                  busy_o,       // a memory access is in progress
  // byte requests
  input  logic                  req_valid_i,
  output logic                  req_ready_o,
  input  logic                  req_we_i,
  input  logic [31:0]           req_addr_i,
  input  logic [7:0]            req_wdata_i,
  output logic                  rsp_valid_o,
  output logic [7:0]            rsp_data_o,
  // memory port (muxed with the engine's by the top while own_o)
  output logic                  own_o,
  output logic                  mem_req_valid_o,
  input  logic                  mem_req_ready_i,
  output logic                  mem_req_we_o,
  output logic [31:0]           mem_req_addr_o,
  output logic [MemBytes*8-1:0] mem_req_wdata_o,
  output logic [MemBytes-1:0]   mem_req_wstrb_o,
  input  logic                  mem_rsp_valid_i,
  input  logic [MemBytes*8-1:0] mem_rsp_rdata_i,
  // a read beat arrived / a byte was written (performance counters)
  output logic                  ev_rd_beat_o,
  output logic                  ev_wr_o
);
  localparam int unsigned OffW = (MemBytes > 1) ? $clog2(MemBytes) : 1;

  typedef enum logic [2:0] {PIdle, PRdReq, PRdWait, PWrReq} pstate_e;
  pstate_e st_q, st_d;
  logic [31:0] addr_q;
  logic [7:0] wdata_q;
  logic cache_v_q;
  logic [31:0] cache_a_q;  // word address (aligned)
  logic [MemBytes*8-1:0] cache_q;
  logic rsp_q;
  logic [7:0] rsp_d_q;

  logic [31:0] word_a, qword_a;
  logic in_win, hit;
  logic [OffW-1:0] off, qoff;
  assign word_a = req_addr_i & ~32'(MemBytes - 1);
  assign qword_a = addr_q & ~32'(MemBytes - 1);
  assign off    = req_addr_i[OffW-1:0];
  assign qoff   = addr_q[OffW-1:0];
  assign in_win = (req_addr_i >= win_base_i) && (req_addr_i < win_limit_i);
  assign hit    = cache_v_q && (cache_a_q == word_a);

  assign req_ready_o = (st_q == PIdle) && !rsp_q;
  assign busy_o      = (st_q != PIdle);
  assign own_o       = (st_q == PRdReq) || (st_q == PRdWait) || (st_q == PWrReq);
  assign rsp_valid_o = rsp_q;
  assign rsp_data_o  = rsp_d_q;
  assign err_o       = req_valid_i && req_ready_o && !in_win;

  assign mem_req_valid_o = port_free_i && ((st_q == PRdReq) || (st_q == PWrReq));
  assign mem_req_we_o    = (st_q == PWrReq);
  assign mem_req_addr_o  = qword_a;
  always_comb begin
    mem_req_wdata_o = '0;
    mem_req_wstrb_o = '0;
    for (int b = 0; b < MemBytes; b++) begin
      mem_req_wdata_o[b*8 +: 8] = wdata_q;
    end
    mem_req_wstrb_o[qoff] = 1'b1;
  end
  assign ev_rd_beat_o = (st_q == PRdWait) && mem_rsp_valid_i;
  assign ev_wr_o      = mem_req_valid_o && mem_req_ready_i && mem_req_we_o;

  always_comb begin
    st_d = st_q;
    unique case (st_q)
      PIdle: begin
        if (req_valid_i && req_ready_o && in_win) begin
          if (req_we_i) st_d = PWrReq;
          else if (!hit) st_d = PRdReq;
        end
      end
      PRdReq:  if (mem_req_valid_o && mem_req_ready_i) st_d = PRdWait;
      PRdWait: if (mem_rsp_valid_i) st_d = PIdle;
      PWrReq:  if (mem_req_valid_o && mem_req_ready_i) st_d = PIdle;
      default: st_d = PIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q      <= PIdle;
      addr_q    <= '0;
      wdata_q   <= '0;
      cache_v_q <= 1'b0;
      cache_a_q <= '0;
      cache_q   <= '0;
      rsp_q     <= 1'b0;
      rsp_d_q   <= '0;
    end else begin
      st_q  <= st_d;
      rsp_q <= 1'b0;
      unique case (st_q)
        PIdle: begin
          if (req_valid_i && req_ready_o && in_win) begin
            addr_q  <= req_addr_i;
            wdata_q <= req_wdata_i;
            if (req_we_i) begin
              if (hit) cache_q[off*8 +: 8] <= req_wdata_i;
            end else if (hit) begin
              rsp_q   <= 1'b1;
              rsp_d_q <= cache_q[off*8 +: 8];
            end
          end
        end
        PRdWait: begin
          if (mem_rsp_valid_i) begin
            cache_q   <= mem_rsp_rdata_i;
            cache_a_q <= qword_a;
            cache_v_q <= 1'b1;
            rsp_q     <= 1'b1;
            rsp_d_q   <= mem_rsp_rdata_i[qoff*8 +: 8];
          end
        end
        default: ;
      endcase
      if (inval_i) cache_v_q <= 1'b0;
    end
  end

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q == PIdle || st_q == PRdReq || st_q == PRdWait || st_q == PWrReq)
    else $error("control port state is not a legal state");
  // a request waiting for the port keeps its address and data (it waits while the port is not
  // free: port_free_i)
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mem_req_valid_o && !mem_req_ready_i) |=>
                   $stable({mem_req_we_o, mem_req_addr_o, mem_req_wdata_o, mem_req_wstrb_o}))
    else $error("control port request changed while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({req_ready_o, rsp_valid_o, own_o, mem_req_valid_o}))
    else $error("X on control port outputs");
`endif
endmodule
