"""Pure figure builders: numpy / pandas data in, `plotly.graph_objects.Figure` out.

Nothing here trains, builds a model or imports Streamlit. Colour scales are fixed per figure
family (attention 0..1, positional encodings -1..1) so that heads, layers and runs compare by eye.
Token axes are positional (0..n-1) with the tokens as tick text, so repeated tokens stay distinct.
Import the module a figure lives in; this package re-exports nothing.

    layout        the house style and the shared helpers: `figure` (one constructor call, margins that
                  already hold what the figure puts in them), colours, axes, colorbars, legends,
                  token axes, reference lines, text widths
    attention     attention_heatmap, z_slider (flip heads in the browser), playable / slider_frames (a z_slider
                  figure that plays in Plotly alone / as stills), attention_mosaic with
                  mosaic_layout and mosaic_grid, attention_entropy_bars
    positional    pe_heatmap, similarity_heatmap
    outputs       output_heatmap (softmax per position), entropy_chart
    gradients     grad_norm_heatmap (layer x step), grad_norm_profile (per layer, per variant)
    curves        line_chart (with mean ± std bands), training_curves (metrics of runs by step)
    results       sweep_heatmap (a two-parameter grid), bar_with_error (mean ± std against a prediction)
    search        optimization_history, parallel_coordinates, importance_bars (a study's trial rows)
    studies       a stored study through optuna.visualization in the house style: history, intermediate,
                  timeline, slice_plot, contour, edf, parallel (log axes 1-2-5), importances, pareto;
                  trial_at (the trial a clicked point is)
    optuna_style  house (an Optuna figure restyled), quiet (drawn without Optuna's warnings), need, ...
    architecture  architecture_diagram (drawn by diagram), param_breakdown
    diagram       the block diagram of a ModelConfig, its boxes sized to hold their text
    timelapse     timelapse_figure: a run's attention snapshots on a z_slider, step by step
    interpret     ablation_heatmap, parts_bars, lens_heatmap, patching_heatmap: Inside the model's views
    learning      induction_over_training (heads and the repeated half's loss), grokking_curves, fourier_spectrum
    projector     for_projector: any figure with a projector's larger text and, for dim rooms, dark
"""
