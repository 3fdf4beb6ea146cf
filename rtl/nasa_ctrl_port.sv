// Control memory master: serves the byte requests of cand_gen, fusion_unit and eval_unit (one
// request at a time) on the engine's memory port while the engine's DMA is idle (port_free_i).
// Reads fetch the whole bus word and keep it: the next byte of the same word is served from it
// (candidate vectors and logits are consecutive bytes). Writes are single-byte strobed bus writes
// and update the cached word. Every address is checked against the window, and must lie outside
// the engine's on-chip scratch window (docs/engine.md "On-chip scratch": the control units see
// memory only): a violation is reported on err_o and the request is dropped (never reaches
// memory).
module nasa_ctrl_port #(
  parameter int unsigned MemBytes     = 32,
  parameter int unsigned ScratchBytes = 0
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  inval_i,      // forget the cached word (memory may have changed)
  input  logic                  port_free_i,  // the engine's DMA is idle and waits
  input  logic [31:0]           win_base_i,
  input  logic [31:0]           win_limit_i,
  input  logic [31:0]           scratch_base_i,  // CSR ScratchBase (aligned; 0: none)
  output logic                  err_o,        // pulse: a request outside the window
  output logic                  busy_o,       // a memory access is in progress
  // byte requests
  input  nasa_pkg::byte_req_t  req_i,
  output nasa_pkg::byte_rsp_t  rsp_o,
  // memory port (muxed with the engine's by the top while own_o)
  output logic                  own_o,
  output nasa_pkg::mem_req_t mem_req_o,
  input  nasa_pkg::mem_rsp_t mem_rsp_i,
  // a read beat arrived / a byte was written (performance counters)
  output logic                  ev_rd_beat_o,
  output logic                  ev_wr_o
);
  localparam int unsigned OffW = (MemBytes > 1) ? $clog2(MemBytes) : 1;
  localparam int unsigned StrbIW = $clog2(nasa_pkg::MemBytesMax);  // a port strobe's index

  typedef enum logic [2:0] {PIdle, PRdReq, PRdWait, PWrReq} pstate_e;
  pstate_e st_q, st_d;
  // registers (all zero after reset)
  typedef struct packed {
    logic [31:0] addr;
    logic [7:0]  wdata;
    logic        cache_v;
    logic [31:0] cache_a;                        // word address (aligned)
    logic        rsp;
    logic [7:0]  rsp_d;
  } regs_t;
  regs_t q;
  logic [MemBytes*8-1:0] cache_q;

  logic [31:0] word_a, qword_a;
  logic in_win, hit;
  logic [OffW-1:0] off, qoff;
  assign word_a = req_i.addr & ~32'(MemBytes - 1);
  assign qword_a = q.addr & ~32'(MemBytes - 1);
  assign off    = req_i.addr[OffW-1:0];
  assign qoff   = q.addr[OffW-1:0];
  assign in_win = (req_i.addr >= win_base_i) && (req_i.addr < win_limit_i) &&
                  !nasa_engine_pkg::in_scratch(req_i.addr, scratch_base_i, ScratchBytes);
  assign hit    = q.cache_v && (q.cache_a == word_a);

  assign rsp_o.ready = (st_q == PIdle) && !q.rsp;
  assign busy_o      = (st_q != PIdle);
  assign own_o       = (st_q == PRdReq) || (st_q == PRdWait) || (st_q == PWrReq);
  assign rsp_o.valid = q.rsp;
  assign rsp_o.rdata = q.rsp_d;
  assign err_o       = req_i.valid && rsp_o.ready && !in_win;

  // single-beat requests; read beats are always taken
  always_comb begin
    mem_req_o           = '0;
    mem_req_o.valid     = port_free_i && ((st_q == PRdReq) || (st_q == PWrReq));
    mem_req_o.we        = (st_q == PWrReq);
    mem_req_o.addr      = qword_a;
    mem_req_o.rsp_ready = 1'b1;
    for (int b = 0; b < MemBytes; b++) begin
      mem_req_o.wdata[b*8 +: 8] = q.wdata;
    end
    mem_req_o.wstrb[StrbIW'(qoff)] = 1'b1;
  end
  assign ev_rd_beat_o = (st_q == PRdWait) && mem_rsp_i.valid;
  assign ev_wr_o      = mem_req_o.valid && mem_rsp_i.ready && mem_req_o.we;

  always_comb begin
    st_d = st_q;
    unique case (st_q)
      PIdle: begin
        if (req_i.valid && rsp_o.ready && in_win) begin
          if (req_i.we) st_d = PWrReq;
          else if (!hit) st_d = PRdReq;
        end
      end
      PRdReq:  if (mem_req_o.valid && mem_rsp_i.ready) st_d = PRdWait;
      PRdWait: if (mem_rsp_i.valid) st_d = PIdle;
      PWrReq:  if (mem_req_o.valid && mem_rsp_i.ready) st_d = PIdle;
      default: st_d = PIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q      <= PIdle;
      q <= '0;
      cache_q   <= '0;
    end else begin
      st_q  <= st_d;
      q.rsp <= 1'b0;
      unique case (st_q)
        PIdle: begin
          if (req_i.valid && rsp_o.ready && in_win) begin
            q.addr  <= req_i.addr;
            q.wdata <= req_i.wdata;
            if (req_i.we) begin
              if (hit) cache_q[off*8 +: 8] <= req_i.wdata;
            end else if (hit) begin
              q.rsp   <= 1'b1;
              q.rsp_d <= cache_q[off*8 +: 8];
            end
          end
        end
        PRdWait: begin
          if (mem_rsp_i.valid) begin
            cache_q   <= mem_rsp_i.rdata[MemBytes*8-1:0];
            q.cache_a <= qword_a;
            q.cache_v <= 1'b1;
            q.rsp     <= 1'b1;
            q.rsp_d   <= mem_rsp_i.rdata[qoff*8 +: 8];
          end
        end
        default: ;
      endcase
      if (inval_i) q.cache_v <= 1'b0;
    end
  end

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q == PIdle || st_q == PRdReq || st_q == PRdWait || st_q == PWrReq)
    else $error("control port state is not a legal state");
  // a request waiting for the port keeps its address and data (it waits while the port is not
  // free: port_free_i)
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mem_req_o.valid && !mem_rsp_i.ready) |=>
                   $stable({mem_req_o.we, mem_req_o.addr, mem_req_o.wdata, mem_req_o.wstrb}))
    else $error("control port request changed while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({rsp_o.ready, rsp_o.valid, own_o, mem_req_o.valid}))
    else $error("X on control port outputs");
`endif
endmodule
