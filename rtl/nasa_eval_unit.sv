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
  logic [NW-1:0] clr_q;
  logic [15:0] leaf_q, k_q, best_i_q;
  logic [7:0] best_q;
  logic [31:0] la_q, lb_q;
  logic [15:0] classes_q;
  logic req_pend_q;  // a request was accepted, waiting for its response
  logic ok_q;
  logic [31:0] rd_q;

  assign busy_o       = (st_q != EIdle);
  assign mreq_o.we    = 1'b0;
  assign mreq_o.wdata = '0;
  assign mreq_o.valid = ((st_q == ELogit) || (st_q == ELabel)) && !req_pend_q;
  assign mreq_o.addr  = (st_q == ELabel) ? lb_q : la_q + 32'(k_q);

  // the counter RAM: one write port, one synchronous read port shared by update and host
  logic we;
  logic [NW-1:0] waddr, raddr;
  logic [31:0] wdata;
  assign raddr = (st_q == EIdle) ? cnt_idx_i[NW-1:0] : leaf_q[NW-1:0];
  always_ff @(posedge clk_i) begin
    if (we) cnt_mem[waddr] <= wdata;
    rd_q <= cnt_mem[raddr];
  end
  assign cnt_o = rd_q;
  always_comb begin
    we    = 1'b0;
    waddr = leaf_q[NW-1:0];
    wdata = rd_q + 32'd1;
    if (st_q == EClear) begin
      we    = 1'b1;
      waddr = clr_q;
      wdata = '0;
    end else if (st_q == EWrite) begin
      we = ok_q;
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
        EClear: if (32'(clr_q) == NodeCap - 1) st_d = EIdle;
        ELogit: if (mrsp_i.valid && (k_q + 16'd1 == classes_q)) st_d = ELabel;
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
      clr_q      <= '0;
      leaf_q     <= '0;
      k_q        <= '0;
      best_i_q   <= '0;
      best_q     <= '0;
      la_q       <= '0;
      lb_q       <= '0;
      classes_q  <= '0;
      req_pend_q <= 1'b0;
      ok_q       <= 1'b0;
      done_o     <= 1'b0;
    end else begin
      st_q   <= st_d;
      done_o <= 1'b0;
      if (abort_i) begin
        req_pend_q <= 1'b0;
      end else begin
        if (mreq_o.valid && mrsp_i.ready) req_pend_q <= 1'b1;
        unique case (st_q)
          EIdle: begin
            if (clear_i) begin
              clr_q <= '0;
            end else if (start_i) begin
              leaf_q    <= leaf_i;
              la_q      <= logits_addr_i;
              lb_q      <= label_addr_i;
              classes_q <= classes_i;
              k_q       <= '0;
              best_i_q  <= '0;
              best_q    <= 8'h80;
            end
          end
          EClear: clr_q <= clr_q + 1'b1;
          ELogit: begin
            if (mrsp_i.valid) begin
              req_pend_q <= 1'b0;
              if (k_q == 16'd0 || $signed(mrsp_i.rdata) > $signed(best_q)) begin
                best_q   <= mrsp_i.rdata;
                best_i_q <= k_q;
              end
              k_q <= k_q + 16'd1;
            end
          end
          ELabel: begin
            if (mrsp_i.valid) begin
              req_pend_q <= 1'b0;
              ok_q       <= (16'(mrsp_i.rdata) == best_i_q);
            end
          end
          EWrite: done_o <= 1'b1;
          default: ;
        endcase
      end
    end
  end
  logic unused;
  assign unused = ^{cnt_idx_i, leaf_q};

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
