// Types of the accelerator top's units (nasa_top, nasa_top_batch_csr): the batch-run CSRs as
// the batch units read them. Not part of the hardware/software contract (that is nasa_pkg).
package nasa_top_pkg;

  // The batch CSRs (docs/fusion.md), as written by the host (CSR map: nasa_pkg::Csr*).
  typedef struct packed {
    logic [31:0] num_layers;     // choice layers L of the supernet
    logic [31:0] cand_addr;      // candidate list
    logic [31:0] cand_stride;
    logic [31:0] cand_count;
    logic [31:0] tpl_addr;       // descriptor templates
    logic [31:0] stem_tpl;
    logic [31:0] head_tpl;
    logic [31:0] img_addr;       // images
    logic [31:0] img_stride;
    logic [31:0] img_count;
    logic [31:0] label_addr;
    logic [31:0] mini_batch;
    logic [31:0] classes;
    logic [31:0] logits_addr;
    logic [31:0] logits_stride;
    logic [31:0] gen_mode;       // candidate source (nasa_pkg::gen_mode_e)
    logic [31:0] gen_seed;
    logic [31:0] gen_prob;
    logic [31:0] parent_addr;
    logic [31:0] parent_count;
    logic [31:0] scratch_stride; // bytes between the scratch tensors of consecutive images
  } batch_cfg_t;

  // Batch sequencer states (nasa_top).
  typedef enum logic [2:0] {
    TIdle  = 3'd0,
    TGen   = 3'd1,  // cand_gen writes the candidates
    TFuse  = 3'd2,  // fusion_unit builds the node table
    TClear = 3'd3,  // wait for the eval unit's clear and the fusion unit
    TSched = 3'd4,  // the scheduler runs the engine (ext mode) and the eval unit
    TEnd   = 3'd5   // the engine ends the run
  } tstate_e;

endpackage
