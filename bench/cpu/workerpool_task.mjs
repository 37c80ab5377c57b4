import workerpool from "workerpool";
workerpool.worker({ tiny: (n) => n + 1 });
