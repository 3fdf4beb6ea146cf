// Evaluation unit: for one (leaf, image) reads the image's logits and its label through the
// control byte port, takes the argmax (first maximum: the lowest index on ties, as the host does)
// and counts a correct answer for the leaf. Per-node counters live in a RAM cleared at the start of
// every batch run (clear_i, NodeCap cycles; busy_o meanwhile). The host reads them through
// cnt_idx_i / cnt_o (registered read, used while idle).
module nasa_eval_unit #(
  parameter int unsigned NodeCap = nasa_pkg::NodeCap
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        clear_i,   // pulse: zero every counter
  input  logic        abort_i,
  output logic        busy_o,
  input  logic        start_i,   // pulse while idle: evaluate one (leaf, image)
  input  logic [15:0] leaf_i,
  input  logic [31:0] logits_addr_i,
  input  logic [31:0] label_addr_i,
  input  logic [15:0] classes_i,  // >= 1
  output logic        done_o,     // pulse
  // control memory byte port (reads only)
  output nasa_pkg::byte_req_t mreq_o,
  input  nasa_pkg::byte_rsp_t mrsp_i,
  // counter read port (host)
  input  logic [15:0] cnt_idx_i,
  output logic [31:0] cnt_o
);
  localparam int unsigned NW = $clog2(NodeCap);

  typedef enum logic [2:0] {EIdle, EClear, ELogit, ELabel, ERead, EWrite} estate_e;
  estate_e st_q, st_d;
  logic [31:0] cnt_mem [NodeCap];
  // registers (all zero after reset)
  typedef struct packed {
    logic [NW-1:0] clr;
    logic [15:0]   leaf;
    logic [15:0]   k;
    logic [15:0]   best_i;
    logic [7:0]    best;
    logic [31:0]   la;
    logic [31:0]   lb;
    logic [15:0]   classes;
    logic          req_pend;                     // a request was accepted, waiting for its response
    logic          ok;
  } regs_t;
  regs_t q;
  logic [31:0] rd_q;

  assign busy_o       = (st_q != EIdle);
  assign mreq_o.we    = 1'b0;
  assign mreq_o.wdata = '0;
  assign mreq_o.valid = ((st_q == ELogit) || (st_q == ELabel)) && !q.req_pend;
  assign mreq_o.addr  = (st_q == ELabel) ? q.lb : q.la + 32'(q.k);

  // the counter RAM: one write port, one synchronous read port shared by update and host
  logic we;
  logic [NW-1:0] waddr, raddr;
  logic [31:0] wdata;
  assign raddr = (st_q == EIdle) ? cnt_idx_i[NW-1:0] : q.leaf[NW-1:0];
  always_ff @(posedge clk_i) begin
    if (we) cnt_mem[waddr] <= wdata;
    rd_q <= cnt_mem[raddr];
  end
  assign cnt_o = rd_q;
  always_comb begin
    we    = 1'b0;
    waddr = q.leaf[NW-1:0];
    wdata = rd_q + 32'd1;
    if (st_q == EClear) begin
      we    = 1'b1;
      waddr = q.clr;
      wdata = '0;
    end else if (st_q == EWrite) begin
      we = q.ok;
    end
  end

  // next state
  always_comb begin
    st_d = st_q;
    if (abort_i) begin
      st_d = EIdle;
    end else begin
      unique case (st_q)
        EIdle: begin
          if (clear_i) begin
            st_d = EClear;
          end else if (start_i) begin
            st_d = ELogit;
          end
        end
        EClear: if (32'(q.clr) == NodeCap - 1) st_d = EIdle;
        ELogit: if (mrsp_i.valid && (q.k + 16'd1 == q.classes)) st_d = ELabel;
        ELabel: if (mrsp_i.valid) st_d = ERead;  // rd_q holds the leaf's counter from then on
        ERead:  st_d = EWrite;
        EWrite: st_d = EIdle;
        default: st_d = EIdle;
      endcase
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q       <= EIdle;
      q <= '0;
      done_o     <= 1'b0;
    end else begin
      st_q   <= st_d;
      done_o <= 1'b0;
      if (abort_i) begin
        q.req_pend <= 1'b0;
      end else begin
        if (mreq_o.valid && mrsp_i.ready) q.req_pend <= 1'b1;
        unique case (st_q)
          EIdle: begin
            if (clear_i) begin
              q.clr <= '0;
            end else if (start_i) begin
              q.leaf    <= leaf_i;
              q.la      <= logits_addr_i;
              q.lb      <= label_addr_i;
              q.classes <= classes_i;
              q.k       <= '0;
              q.best_i  <= '0;
              q.best    <= 8'h80;
            end
          end
          EClear: q.clr <= q.clr + 1'b1;
          ELogit: begin
            if (mrsp_i.valid) begin
              q.req_pend <= 1'b0;
              if (q.k == 16'd0 || $signed(mrsp_i.rdata) > $signed(q.best)) begin
                q.best   <= mrsp_i.rdata;
                q.best_i <= q.k;
              end
              q.k <= q.k + 16'd1;
            end
          end
          ELabel: begin
            if (mrsp_i.valid) begin
              q.req_pend <= 1'b0;
              q.ok       <= (16'(mrsp_i.rdata) == q.best_i);
            end
          end
          EWrite: done_o <= 1'b1;
          default: ;
        endcase
      end
    end
  end
  logic unused;
  assign unused = ^{cnt_idx_i, q.leaf};

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // valid/ready: a read waiting for ready is held, unchanged, until accepted (abort_i drops it).
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mreq_o.valid && !mrsp_i.ready && !abort_i) |=>
                   (mreq_o.valid && $stable(mreq_o.addr)))
    else $error("nasa_eval_unit: request changed or withdrawn while stalled");
  // FSM legality; start and clear come while idle.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q inside {EIdle, EClear, ELogit, ELabel, ERead, EWrite})
    else $error("nasa_eval_unit: illegal state %0d", st_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni) (start_i || clear_i) |-> !busy_o)
    else $error("nasa_eval_unit: start or clear while busy");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({clear_i, abort_i, start_i, mreq_o.valid, mrsp_i.ready,
                                mrsp_i.valid}))
    else $error("nasa_eval_unit: X on a control signal");
`endif
endmodule
